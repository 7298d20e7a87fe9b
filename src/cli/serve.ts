// `threatcol serve`: runs the collector until SIGTERM/SIGINT; SIGHUP reloads the registry and TLS material.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load-config.js';
import type { Logger } from '../log.js';
import { addCommonOptions, type CommonOptions, listenOverrides, loadFromOptions } from './common-options.js';
import type { CliIo } from './io.js';

interface ServeOptions extends CommonOptions {
  host?: string;
  port?: string;
  cert?: string;
  key?: string;
  logLevel?: string;
  logFormat?: string;
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
      .option('--workers <n|auto>', 'processes serving requests (default 1; auto: one per available CPU)'),
  ).action((options: ServeOptions) => run(() => serve(options, io)));
}

export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  const loaded = loadFromOptions(options, io, {
    ...listenOverrides(options),
    'tls.cert': options.cert,
    'tls.key': options.key,
    'log.level': options.logLevel,
    'log.format': options.logFormat,
    'server.workers':
      options.workers === undefined || !/^\d+$/.test(options.workers)
        ? options.workers
        : Number(options.workers),
  });
  // Loaded here, not at the top: the other commands start faster without pino and the server's module graph.
  const { createLogger } = await import('../log.js');
  const logger = createLogger({
    level: loaded.config.log.level,
    format: loaded.config.log.format,
    stream: io.stdout,
    isTty: io.stdout.isTTY === true,
  });
  if (cluster.isWorker) return serveAsWorker(loaded, logger, io.env);
  if (loaded.configPath) logger.info({ config: loaded.configPath }, 'configuration loaded');
  const listenFd = inheritedListener(io.env, process.pid);
  if (listenFd !== undefined) {
    logger.info(
      { listenFds: Number(io.env.LISTEN_FDS) },
      'using the listening socket passed by systemd; server.host and server.port are not used',
    );
  }
  const workers = workerCount(loaded.config.server.workers);
  if (workers > 1) return serveAsPrimary(loaded, logger, workers, listenFd);
  const { startDaemon } = await import('../server/daemon.js');
  const daemon = await startDaemon({ loaded, logger, listenFd });
  const stop = () => daemon.stop();
  const reload = () => daemon.reload();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', reload);
  try {
    return await daemon.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', reload);
  }
}

/** `server.workers`: a count, or "auto" for os.availableParallelism() (which respects CPU affinity). */
export function workerCount(setting: number | 'auto'): number {
  return setting === 'auto' ? availableParallelism() : setting;
}

async function serveAsPrimary(
  loaded: LoadedConfig,
  logger: Logger,
  workers: number,
  listenFd: number | undefined,
): Promise<number> {
  const { createPrimary } = await import('../cluster/primary.js');
  const primary = createPrimary({ loaded, logger, workers, ...(listenFd === undefined ? {} : { listenFd }) });
  const stop = () => primary.stop();
  const reload = () => primary.reload();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', reload);
  try {
    await primary.start();
    return await primary.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', reload);
  }
}

/** A worker forked by the primary (its slot and the shared listener come in TC_* variables). */
async function serveAsWorker(
  loaded: LoadedConfig,
  logger: Logger,
  env: Record<string, string | undefined>,
): Promise<number> {
  const { runWorker } = await import('../cluster/worker.js');
  const id = Number(env.TC_WORKER_ID);
  const workerLogger = logger.child({ worker: id, pid: process.pid });
  // systemd sends SIGTERM to every process of the unit; a terminal sends SIGINT to the group. SIGHUP comes
  // from the primary as a message (ExecReload signals the main pid only): ignored here, not fatal.
  const ignore = () => {};
  process.on('SIGHUP', ignore);
  const result = await runWorker({
    loaded,
    logger: workerLogger,
    id,
    workers: Number(env.TC_WORKERS),
    ...(env.TC_LISTEN_FD === undefined ? {} : { listenFd: Number(env.TC_LISTEN_FD) }),
    channel: {
      send: (message, callback) => process.send?.(message, undefined, undefined, callback),
      onMessage: (handler) => process.on('message', handler),
      onDisconnect: (handler) => process.once('disconnect', handler),
      disconnect: () => process.disconnect?.(),
    },
    onSignal: (stop) => {
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    },
  }).catch((error: unknown) => {
    // Could not start (config, TLS, listen): the error reaches stderr and the status the primary; the open
    // IPC channel must not keep this process alive.
    process.disconnect?.();
    throw error;
  });
  return result;
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
