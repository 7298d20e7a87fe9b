// `threatcol serve`: reads the options, starts the collector (one process, or the primary of --workers, or
// a worker) and hands it to daemon/run-service.ts, which serves it until SIGTERM/SIGINT.
import type { Cluster } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load-config.js';
import type { Service } from '../daemon/run-service.js';
import { releaseStartupSignals } from '../daemon/startup-signals.js';
import { ThreatcolError } from '../errors.js';
import type { Logger } from '../log.js';
import { addCommonOptions, type CommonOptions, configReader, listenOverrides } from './common-options.js';
import type { CliIo } from './io.js';

interface ServeOptions extends CommonOptions {
  host?: string;
  port?: string;
  cert?: string;
  key?: string;
  logLevel?: string;
  logFormat?: string;
  adminListen?: string;
  workers?: string;
}

export function registerServe(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    program
      .command('serve')
      .description('run the collector (HTTPS, POST /firewall and POST /generic)')
      .option('--host <host>', 'listen address (default "::", dual-stack)')
      .option('--port <n>', 'listen port (default 443)')
      .option('--cert <file>', 'PEM certificate chain (default: self-signed in <data-dir>/tls/)')
      .option('--key <file>', 'PEM private key')
      .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent (default info)')
      .option('--log-format <format>', 'auto, json or pretty (default auto: pretty on a terminal)')
      .option(
        '--admin-listen <host:port>',
        'admin listener: dashboard, /metrics, /healthz, /readyz (default 127.0.0.1:9441; "" = off; port 0 = any)',
      )
      .option('--workers <n|auto>', 'processes serving requests (default 1; auto: one per available CPU)'),
  ).action((options: ServeOptions) => run(() => serve(options, io)));
}

export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  // node:cluster (and child_process under it) loaded here: every other command line loads this definition.
  const { default: cluster } = await import('node:cluster');
  // A worker runs the configuration the primary hands it, never reading the file.
  if (cluster.isWorker) return serveAsWorker(io, cluster);
  // A reload reads the same file, environment and flags as the start (daemon/config-reload.ts).
  const read = await configReader(options, io, serveOverrides(options));
  const loaded = read();
  const logger = (await serveLogger(io))(loaded);
  if (loaded.configPath) logger.info({ config: loaded.configPath }, 'configuration loaded');
  const listenFd = inheritedListener(io.env, process.pid);
  if (listenFd !== undefined) {
    logger.info(
      { listenFds: Number(io.env.LISTEN_FDS) },
      'using the listening socket passed by systemd; server.host and server.port are not used',
    );
  }
  // Loaded while the collector starts: once it logs that it listens, SIGTERM must find its handler at once
  // (awaiting this import after the start left a window of tens of ms in which SIGTERM killed serve outright).
  const serviceModule = import('../daemon/run-service.js');
  serviceModule.catch(() => {}); // a failed start returns before awaiting it; the await below still throws
  let daemon: Collector;
  try {
    daemon = await startCollector(loaded, logger, listenFd, { env: io.env, reread: read });
  } catch (error) {
    releaseStartupSignals();
    throw underNpm(error, io.env);
  }
  if (daemon.failed) {
    // --workers: a worker could not start and printed why; the primary stopped the others (no READY=1).
    releaseStartupSignals();
    return daemon.done;
  }
  const { runService } = await serviceModule;
  return runService(daemon, { env: io.env, logger });
}

/** Makes serve's logger for a configuration (the primary's, or what a worker is handed). */
async function serveLogger(io: CliIo): Promise<(loaded: LoadedConfig) => Logger> {
  // Loaded here, not at the top: the other commands start faster without pino and the server's module graph.
  const { createLogger, isJournalStream } = await import('../log.js');
  return (loaded) =>
    createLogger({
      level: loaded.config.log.level,
      format: loaded.config.log.format,
      stream: io.stdout,
      isTty: io.stdout.isTTY === true,
      journal: isJournalStream(io.env.JOURNAL_STREAM, (io.stdout as { fd?: number }).fd),
    });
}

/** The flags of serve as configuration keys (they win over the file and the environment). */
function serveOverrides(options: ServeOptions): Record<string, unknown> {
  return {
    ...listenOverrides(options),
    'tls.cert': options.cert,
    'tls.key': options.key,
    'log.level': options.logLevel,
    'log.format': options.logFormat,
    'admin.listen': options.adminListen,
    'server.workers':
      options.workers === undefined || !/^\d+$/.test(options.workers)
        ? options.workers
        : Number(options.workers),
  };
}

/** What serve runs: one process (the daemon) or, with `server.workers` > 1, the primary and its workers. */
type Collector = Service & { failed?: boolean };

async function startCollector(
  loaded: LoadedConfig,
  logger: Logger,
  listenFd: number | undefined,
  reload: { env: Record<string, string | undefined>; reread: () => LoadedConfig },
): Promise<Collector> {
  const workers = workerCount(loaded.config.server.workers);
  if (workers <= 1) {
    const { startDaemon } = await import('../daemon/start-daemon.js');
    return startDaemon({ loaded, logger, listenFd, ...reload });
  }
  const { createPrimary } = await import('../cluster/primary.js');
  const primary = createPrimary({
    loaded,
    logger,
    workers,
    ...reload,
    ...(listenFd === undefined ? {} : { listenFd }),
  });
  await primary.start();
  return {
    reload: () => primary.reload(),
    stop: () => primary.stop(),
    done: primary.done,
    address: primary.address ?? { address: '', port: 0 },
    // No address: the workers could not start; `done` holds the status of the one that failed.
    failed: primary.address === null,
  };
}

/** `server.workers`: a count, or "auto" for os.availableParallelism() (which respects CPU affinity). */
export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

/**
 * A worker forked by the primary (its slot and the shared listener come in TC_* variables; its configuration
 * over IPC, cluster/worker.ts).
 */
async function serveAsWorker(io: CliIo, cluster: Cluster): Promise<number> {
  const { env } = io;
  const [{ runWorker }, logger] = await Promise.all([import('../cluster/worker.js'), serveLogger(io)]);
  const id = Number(env.TC_WORKER_ID);
  // SIGHUP reaches the workers as a message from the primary (ExecReload signals the main pid only); one
  // sent to a worker directly (a terminal's hang-up) is ignored, not fatal.
  process.on('SIGHUP', () => {});
  return runWorker({
    logger: (loaded) => logger(loaded).child({ worker: id, pid: process.pid }),
    id,
    workers: Number(env.TC_WORKERS),
    ...(env.TC_LISTEN_FD === undefined ? {} : { listenFd: Number(env.TC_LISTEN_FD) }),
    channel: {
      send: (message, callback) => process.send?.(message, undefined, undefined, callback),
      onMessage: (handler) => process.on('message', handler),
      onDisconnect: (handler) => process.once('disconnect', handler),
      // Through cluster's worker: a bare process.disconnect() makes node:cluster exit the worker with 0
      // at once, and the primary must see this worker's own status (74 after a failed sync).
      disconnect: () => cluster.worker?.disconnect(),
    },
    // systemd signals every process of the unit on stop; a terminal's Ctrl-C the whole process group.
    onSignal: (stop) => {
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      // Held until now (bin/threatcol): one that came while the worker started stops it cleanly.
      if (releaseStartupSignals().some((s) => s === 'SIGTERM' || s === 'SIGINT')) stop();
    },
  }).catch((error: unknown) => {
    releaseStartupSignals();
    // Could not start (configuration, TLS, listener): the error goes to stderr and the exit status to the
    // primary; the open IPC channel must not keep this process alive meanwhile.
    cluster.worker?.disconnect();
    throw error;
  });
}

/**
 * Started by `npm start`, flags go after `--`: "use --port 8443" would fail there, so the advice says
 * `npm start -- --port 8443`.
 */
function underNpm(error: unknown, env: Record<string, string | undefined>): unknown {
  if (!(error instanceof ThreatcolError) || error.code !== 'LISTEN_FAILED') return error;
  if (env.npm_lifecycle_event !== 'start') return error;
  return new ThreatcolError(
    'LISTEN_FAILED',
    error.message.replace('use --port 8443', 'use npm start -- --port 8443'),
    { cause: error.cause },
  );
}

/**
 * systemd socket activation, as sd_listen_fds(3): LISTEN_FDS >= 1 and LISTEN_PID is this process, so fd 3 is
 * a listening socket. Without a matching LISTEN_PID the variables were inherited from a parent and mean nothing.
 */
export function inheritedListener(env: Record<string, string | undefined>, pid: number): number | undefined {
  if (env.LISTEN_FDS === undefined || !/^\d+$/.test(env.LISTEN_FDS) || Number(env.LISTEN_FDS) < 1) {
    return undefined;
  }
  if (env.LISTEN_PID === undefined || Number(env.LISTEN_PID) !== pid) return undefined;
  return 3;
}
