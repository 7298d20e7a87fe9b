// `threatcol serve`: runs the collector until SIGTERM/SIGINT; SIGHUP reloads the registry and TLS material;
// tells systemd when it is ready, reloading and stopping (Type=notify).
import type { Command } from 'commander';
import { ThreatcolError } from '../errors.js';
import type { Daemon } from '../server/daemon.js';
import { addCommonOptions, type CommonOptions, listenOverrides, loadFromOptions } from './common-options.js';
import type { CliIo } from './io.js';
import { releaseStartupSignals } from './startup-signals.js';

interface ServeOptions extends CommonOptions {
  host?: string;
  port?: string;
  cert?: string;
  key?: string;
  logLevel?: string;
  logFormat?: string;
  adminListen?: string;
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
      ),
  ).action((options: ServeOptions) => run(() => serve(options, io)));
}

export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  const loaded = loadFromOptions(options, io, {
    ...listenOverrides(options),
    'tls.cert': options.cert,
    'tls.key': options.key,
    'log.level': options.logLevel,
    'log.format': options.logFormat,
    'admin.listen': options.adminListen,
  });
  // Loaded here, not at the top: the other commands start faster without pino and the server's module graph.
  const { createLogger } = await import('../log.js');
  const logger = createLogger({
    level: loaded.config.log.level,
    format: loaded.config.log.format,
    stream: io.stdout,
    isTty: io.stdout.isTTY === true,
  });
  if (loaded.configPath) logger.info({ config: loaded.configPath }, 'configuration loaded');
  const { startDaemon } = await import('../server/daemon.js');
  const listenFd = inheritedListener(io.env, process.pid);
  if (listenFd !== undefined) {
    logger.info(
      { listenFds: Number(io.env.LISTEN_FDS) },
      'using the listening socket passed by systemd; server.host and server.port are not used',
    );
  }
  const { createSdNotifier, monotonicUsec } = await import('../server/sd-notify.js');
  const notifier = createSdNotifier({ env: io.env, logger });
  let daemon: Daemon;
  try {
    daemon = await startDaemon({ loaded, logger, listenFd });
  } catch (error) {
    releaseStartupSignals();
    throw underNpm(error, io.env);
  }
  const stop = () => {
    void notifier.notify({ STOPPING: '1' });
    daemon.stop();
  };
  // RELOADING=1 with MONOTONIC_USEC, then READY=1: what systemd >= 253 expects (Type=notify-reload) and what
  // older ones show as "reloading"; the reload itself is synchronous.
  const reload = () => {
    void notifier.notify({ RELOADING: '1', MONOTONIC_USEC: monotonicUsec() });
    daemon.reload();
    void notifier.notify({ READY: '1' });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', reload);
  // Only now, with the handlers above in place, so that no signal falls between the two.
  const held = releaseStartupSignals();
  const { address, port } = daemon.address;
  void notifier.notify({ READY: '1', STATUS: `listening on ${address} port ${port}` });
  if (held.includes('SIGHUP')) {
    logger.info('SIGHUP received during start-up: reloading now');
    reload();
  }
  try {
    return await daemon.done;
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', reload);
    await notifier.idle();
  }
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
