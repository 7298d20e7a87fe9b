// `threatcol check [--json]`: validates config, TLS material, data directory, port and running daemon;
// one OK/WARN/FAIL line per check and a non-zero exit on any FAIL.
import type { Command } from 'commander';
import type { CheckResult } from '../check/local-checks.js';
import type { LoadedConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import type { Store } from '../store/store.js';
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
  testOutputs?: boolean;
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
      .option('--test-outputs', 'send one marked sample record through each enabled output')
      .option('--json', 'print {"ok", "checks": [{"name", "status", "message"}]}'),
  ).action((options: CheckOptions) => run(() => check(options, io)));
}

export async function check(options: CheckOptions, io: CliIo): Promise<number> {
  // Imported here: the definition above is loaded for every command line, the checks only by `check`.
  const [
    { checkDataDir, checkTls },
    { checkDaemon, checkPort, checkReady, connectHost, runningElsewhere },
    { servedFingerprint },
    { checkOutputs },
    { checkRuntime },
  ] = await Promise.all([
    import('../check/local-checks.js'),
    import('../check/network-checks.js'),
    import('../check/tls-probe.js'),
    import('./outputs/check-outputs.js'),
    import('../check/runtime-support.js'),
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
    // What this means for a daemon that runs: `systemctl reload` refuses the file, a restart would fail.
    const consequence =
      error.code === 'CONFIG_INVALID'
        ? '; a running daemon keeps the configuration it has (reload refuses this file) and a restart would fail until it is fixed'
        : '';
    results.push({ name: 'config', status: 'fail', message: `${error.message}${consequence}` });
  }
  // The runtime this runs on: the package's bundled one (a WARN once its line is past its end of life).
  results.push(checkRuntime(process.version, Date.now()));
  if (loaded) {
    const uid = process.getuid?.() ?? -1;
    const tls = checkTls(loaded, Date.now());
    results.push(...tls.results);
    results.push(...checkDataDir(loaded, uid));
    results.push(
      ...(await import('../check/enrich-checks.js')).checkEnrichment(loaded.config.enrich, Date.now()),
    );
    results.push(...(await checkStore(loaded, io)));
    const daemon = options.daemon === false ? null : await checkDaemon(loaded, tls.tls?.fingerprint ?? null);
    // --no-daemon: whether threatcol itself holds the port, by the certificate it serves (no request made).
    const ownPort =
      daemon === null && tls.tls?.fingerprint != null && loaded.config.server.port !== 0
        ? (await servedFingerprint(connectHost(loaded.config.server.host), loaded.config.server.port)) ===
          tls.tls.fingerprint
        : false;
    results.push(await checkPort(loaded, daemon?.answering === true || ownPort, uid));
    if (daemon) {
      const ready = await checkReady(loaded);
      results.push(
        !daemon.answering && ready.status === 'ok' ? runningElsewhere(loaded) : daemon.result,
        ready,
      );
    }
    results.push(
      ...(await checkOutputs(loaded, io, { daemon: daemon !== null, test: options.testOutputs === true })),
    );
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

/**
 * The configured backend, as the daemon would find it (files: writable with room; NATS: reachable), and its
 * sensor registry: entries that are not valid sensors are skipped by the daemon, named here.
 */
async function checkStore(loaded: LoadedConfig, io: CliIo): Promise<CheckResult[]> {
  const backend = loaded.config.store.backend;
  try {
    return await withStore(loaded, io, async (store) => {
      // A fresh connection: give it the time a request would have.
      const health = await store.health({ waitMs: Math.min(loaded.config.nats.publishTimeoutMs, 5000) });
      if (!health.ok) {
        return [
          { name: 'store', status: 'fail', message: `${backend} backend: ${health.reason ?? 'not ready'}` },
        ];
      }
      const { checkSyslogListeners } = await import('../check/syslog-listeners.js');
      const sensors = await store.registry.list().catch(() => []);
      const { checkSilentSensors } = await import('../check/silent-sensors.js');
      const silent = checkSilentSensors(
        sensors,
        await store.stats.readSilences().catch(() => ({})),
        loaded.config.sensors.expectEvery,
      );
      const syslogSensors = sensors
        .filter((s) => s.status === 'active' && s.syslog !== undefined)
        .map((s) => s.name);
      const syslog = checkSyslogListeners(loaded.config.syslog, syslogSensors);
      const { checkFeeds } = await import('../check/feed-checks.js');
      const { checkRules } = await import('../check/rule-checks.js');
      const [feeds, ruleResult] = await store.decisions.read().then(
        (state) => [checkFeeds(state, Date.now()), checkRules(state, loaded.config.blocklist, Date.now())],
        (error: Error): CheckResult[] => [
          { name: 'feeds', status: 'warn', message: `cannot read the feeds: ${error.message}` },
        ],
      );
      return [
        { name: 'store', status: 'ok', message: `${backend} backend ready` },
        await checkRegistry(store),
        ...(syslog ? [syslog] : []),
        ...(silent ? [silent] : []),
        ...(feeds ? [feeds] : []),
        ...(ruleResult ? [ruleResult] : []),
      ];
    });
  } catch (error) {
    if (!(error instanceof ThreatcolError)) throw error;
    return [{ name: 'store', status: 'fail', message: `${backend} backend: ${error.message}` }];
  }
}

async function checkRegistry(store: Store): Promise<CheckResult> {
  try {
    const rejected = await store.registry.rejectedEntries();
    if (rejected.length === 0)
      return { name: 'registry', status: 'ok', message: 'every sensor entry is valid' };
    return {
      name: 'registry',
      status: 'warn',
      message: `${rejected.length} entr${rejected.length === 1 ? 'y is' : 'ies are'} not a valid sensor and skipped (the others work): ${rejected.map((r) => `${r.entry} (${r.reason})`).join(', ')}`,
    };
  } catch (error) {
    if (!(error instanceof ThreatcolError)) throw error;
    // Not readable by this user: the data directory's check says so already.
    if (error.code === 'PERMISSION_DENIED')
      return { name: 'registry', status: 'warn', message: error.message };
    return { name: 'registry', status: 'fail', message: error.message };
  }
}
