// `threatcol check [--json]`: validates config, TLS material, data directory, port and running daemon;
// one OK/WARN/FAIL line per check and a non-zero exit on any FAIL.
import type { Command } from 'commander';
import type { CheckResult } from '../check/local-checks.js';
import type { LoadedConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import { withStore } from './cli-store.js';
import { addCommonOptions, type CommonOptions, listenOverrides, loadFromOptions } from './common-options.js';
import { type CliIo, write, writeJson } from './io.js';

interface CheckOptions extends CommonOptions {
  json?: boolean;
  port?: string;
  host?: string;
  /** false with --no-daemon: skip the running-daemon check (before the first start). */
  daemon?: boolean;
  adminListen?: string;
}

export function registerCheck(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    program
      .command('check')
      .description('check config, TLS material, data directory, port and the running daemon')
      .option('--host <host>', 'listen address to check (default: server.host)')
      .option('--port <n>', 'port to check (default: server.port)')
      .option('--admin-listen <host:port>', 'admin listener to ask /readyz (default: admin.listen)')
      .option('--no-daemon', 'skip the checks of a running daemon (e.g. before the first start)')
      .option('--json', 'print {"ok", "checks": [{"name", "status", "message"}]}'),
  ).action((options: CheckOptions) => run(() => check(options, io)));
}

export async function check(options: CheckOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line, the checks only by `check`.
  const [
    { checkDataDir, checkTls },
    { checkDaemon, checkPort, checkReady, connectHost },
    { servedFingerprint },
  ] = await Promise.all([
    import('../check/local-checks.js'),
    import('../check/network-checks.js'),
    import('../check/tls-probe.js'),
  ]);
  const results: CheckResult[] = [];
  let loaded: LoadedConfig | null = null;
  // A bad --port is a usage error (64), not a failed check.
  const overrides = listenOverrides(options);
  try {
    loaded = await loadFromOptions(options, io, { ...overrides, 'admin.listen': options.adminListen });
    const fromEnv = Object.keys(io.env)
      .filter((name) => name.startsWith('THREATCOL_') && io.env[name] !== undefined)
      .sort();
    const env = fromEnv.length > 0 ? ` and ${fromEnv.join(', ')}` : '';
    results.push({
      name: 'config',
      status: 'ok',
      message: loaded.configPath
        ? `${loaded.configPath}${env} valid`
        : fromEnv.length > 0
          ? `no configuration file; defaults${env}, valid`
          : 'no configuration file: defaults',
    });
  } catch (error) {
    if (!(error instanceof ThreatcolError)) throw error;
    results.push({ name: 'config', status: 'fail', message: error.message });
  }
  if (loaded) {
    const uid = process.getuid?.() ?? -1;
    const tls = checkTls(loaded, Date.now());
    results.push(...tls.results);
    results.push(...checkDataDir(loaded, uid));
    results.push(await checkStore(loaded, io));
    const daemon = options.daemon === false ? null : await checkDaemon(loaded, tls.tls?.fingerprint ?? null);
    // --no-daemon: whether threatcol itself holds the port, by the certificate it serves (no request made).
    const ownPort =
      daemon === null && tls.tls?.fingerprint != null && loaded.config.server.port !== 0
        ? (await servedFingerprint(connectHost(loaded.config.server.host), loaded.config.server.port)) ===
          tls.tls.fingerprint
        : false;
    results.push(await checkPort(loaded, daemon?.answering === true || ownPort, uid));
    if (daemon) results.push(daemon.result);
    if (daemon) results.push(await checkReady(loaded));
  }

  const failed = results.filter((r) => r.status === 'fail');
  if (options.json) {
    writeJson(io.stdout, { ok: failed.length === 0, checks: results });
  } else {
    const width = Math.max(...results.map((r) => r.name.length));
    write(
      io.stdout,
      results
        .map((r) => `${r.status.toUpperCase().padEnd(4)}  ${r.name.padEnd(width)}  ${r.message}`)
        .join('\n'),
    );
  }
  if (failed.length > 0) {
    throw new ThreatcolError(
      'CHECK_FAILED',
      `${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.map((r) => r.name).join(', ')}`,
    );
  }
  return 0;
}

/** The configured backend, as the daemon would find it (files: writable with room; NATS: reachable). */
async function checkStore(loaded: LoadedConfig, io: CliIo): Promise<CheckResult> {
  const backend = loaded.config.store.backend;
  try {
    const health = await withStore(loaded, io, (store) =>
      // A fresh connection: give it the time a request would have.
      store.health({ waitMs: Math.min(loaded.config.nats.publishTimeoutMs, 5000) }),
    );
    return health.ok
      ? { name: 'store', status: 'ok', message: `${backend} backend ready` }
      : { name: 'store', status: 'fail', message: `${backend} backend: ${health.reason ?? 'not ready'}` };
  } catch (error) {
    if (!(error instanceof ThreatcolError)) throw error;
    return { name: 'store', status: 'fail', message: `${backend} backend: ${error.message}` };
  }
}
