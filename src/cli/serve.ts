// `threatcol serve`: runs the collector until SIGTERM/SIGINT; SIGHUP reloads the registry and TLS material.
import type { Command } from 'commander';
import { addCommonOptions, type CommonOptions, loadFromOptions } from './common-options.js';
import type { CliIo } from './io.js';

interface ServeOptions extends CommonOptions {
  host?: string;
  port?: string;
  cert?: string;
  key?: string;
  logLevel?: string;
  logFormat?: string;
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
      .option('--log-format <format>', 'auto, json or pretty (default auto: pretty on a terminal)'),
  ).action((options: ServeOptions) => run(() => serve(options, io)));
}

export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  const loaded = loadFromOptions(options, io, {
    'server.host': options.host,
    'server.port': options.port === undefined ? undefined : toPort(options.port),
    'tls.cert': options.cert,
    'tls.key': options.key,
    'log.level': options.logLevel,
    'log.format': options.logFormat,
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
  const daemon = await startDaemon({ loaded, logger, listenFd: inheritedListener(io.env) });
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

function toPort(text: string): number | string {
  return /^\d+$/.test(text) ? Number(text) : text;
}

/** systemd socket activation: LISTEN_PID is ours and LISTEN_FDS >= 1, so fd 3 is a listening socket. */
function inheritedListener(env: Record<string, string | undefined>): number | undefined {
  if (env.LISTEN_FDS === undefined || Number(env.LISTEN_FDS) < 1) return undefined;
  if (env.LISTEN_PID !== undefined && Number(env.LISTEN_PID) !== process.pid) return undefined;
  return 3;
}
