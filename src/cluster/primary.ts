// The primary of `serve --workers N`: owns no request. It prepares what must exist once (data directory,
// self-signed certificate, store), starts the workers that share the listener (worker-pool.ts forks,
// restarts and stops them), forwards SIGHUP/SIGTERM, and is the single holder of the rate-limit buckets,
// the connection counts, the dedupe window, the syslog tally and sensor-stats.json (stats-merge.ts). It also
// runs the admin listener (metrics aggregated from the workers). Retention runs in worker 1's writer.
import type { Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { type RunningAdmin, startAdminListener } from '../admin/start-admin.js';
import type { LoadedConfig } from '../config/load-config.js';
import {
  type CertificateUpkeep,
  prepareDataDirAndTls,
  startCertificateUpkeep,
} from '../daemon/certificate-upkeep.js';
import { createConfigReloader, type LivePart, type ReloadOutcome } from '../daemon/config-reload.js';
import { applyLiveSettings, outputsLivePart } from '../daemon/live-settings.js';
import { watchOutputsConfig } from '../daemon/outputs-reload.js';
import { OUTPUTS_START_WAIT_MS } from '../daemon/start-daemon.js';
import { boxId, startBoxEngine } from '../decisions/box-engine.js';
import { registerEngineMetrics } from '../decisions/decision-metrics.js';
import type { RunningEngine } from '../decisions/engine.js';
import { shareDecisionsWatch } from '../decisions/watched-decisions.js';
import { RateLimiter } from '../inputs/https/rate-limit.js';
import { syslogConfigured } from '../inputs/syslog/syslog-listener.js';
import { SyslogTally } from '../inputs/syslog/syslog-tally.js';
import { clusterMetricsRenderer } from '../metrics/metrics.js';
import { registerOutputMetrics } from '../metrics/output-metrics.js';
import { registerSyslogMetrics } from '../metrics/syslog-metrics.js';
import { runOutputs } from '../outputs/run-outputs.js';
import type { RunningOutputs } from '../outputs/start-outputs.js';
import { type BoxSilenceWatch, startBoxSilenceWatch } from '../sensors/box-silence-watch.js';
import type { DecisionsStore } from '../store/decisions.js';
import { openStore, openWorkersDedupeIndex } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { waitAtMost } from '../wait-at-most.js';
import { ConnectionLedger } from './connection-ledger.js';
import { DedupeBroker } from './ipc-dedupe.js';
import type { WorkerMessage } from './messages.js';
import { mergeStatsDelta } from './stats-merge.js';
import { WorkerPool } from './worker-pool.js';

export interface PrimaryOptions {
  loaded: LoadedConfig;
  logger: Logger;
  workers: number;
  /** An inherited listening socket (systemd socket activation); the workers listen on it through cluster. */
  listenFd?: number;
  now?: () => number;
  expiryCheckIntervalMs?: number;
  tlsDebounceMs?: number;
  /** Where outputs read secrets named by `tokenEnv` & co. */
  env?: Record<string, string | undefined>;
  /** Reads the configuration again on SIGHUP (the workers are handed what it applied, for their own parts). */
  reread?: () => LoadedConfig;
}

/** Something the primary owns besides the workers (the admin listener of issue 14): closed on stop. */
export interface OwnedServer {
  close(): Promise<void> | void;
}

export interface Primary {
  /** Forks the workers; resolves once all listen (or once startup failed: then `done` has the status). */
  start(): Promise<void>;
  /**
   * SIGHUP: the configuration is read again; every worker applies what the primary applied of it, and re-reads
   * the registry and the TLS material.
   */
  reload(): ReloadOutcome;
  /** Registers a part of the configuration the primary applies live (its outputs' forwarders, for one). */
  onConfigReloaded(part: LivePart): void;
  /** SIGTERM: every worker finishes its in-flight requests and stops; then the primary writes the stats. */
  stop(): void;
  /** Resolves with the exit status once every worker is gone. */
  readonly done: Promise<number>;
  readonly address: AddressInfo | null;
  /** The live workers: slot (1..N, part of segment names) and pid. */
  workers(): { id: number; pid: number }[];
  addServer(server: OwnedServer): void;
}

export function createPrimary(options: PrimaryOptions): Primary {
  const { config, dataDir } = options.loaded;
  const { logger } = options;
  const now = options.now ?? Date.now;
  const owned: OwnedServer[] = [];
  const limiter = new RateLimiter(config.rateLimit.recordsPerSecond, config.rateLimit.burst);
  /** Every worker's connections under the one policy (connection-slots.ts): HTTPS and syslog in one table. */
  const ledger = new ConnectionLedger({
    max: config.server.maxConnections,
    perGroup: config.server.maxConnectionsPerAddress,
    unproven: config.server.maxConnections,
  });
  /** Live workers by id: where to send the close of a connection another worker's newcomer made room from. */
  const workersById = new Map<number, Worker>();
  /** Every worker's syslog counts and samples, summed (null: syslog is off). */
  const syslogTally = syslogConfigured(config) ? new SyslogTally() : null;
  let store: Store | null = null;
  /** Files backend with dedupe on: the one window every worker claims its keys in. */
  let dedupe: DedupeBroker | null = null;
  let admin: RunningAdmin | null = null;
  /** The certificate's watch and expiry warnings; the workers serve it, each reloading on the primary's word. */
  let certificate: CertificateUpkeep | null = null;
  /** The outputs run here, once per box, never in a worker (DESIGN 13). */
  let outputs: RunningOutputs | null = null;
  /** Their configuration as last applied: files retention (worker 1) keeps what they have not passed. */
  let appliedOutputs = config.outputs;
  /** The decisions engine runs here, once per box (DESIGN 15); the workers serve the feeds. */
  let engine: RunningEngine | null = null;
  let silenceWatch: BoxSilenceWatch | null = null;
  /** The series only the primary holds (outputs, engine, syslog tally, silent sensors), after the workers'. */
  const primaryRegistry = new Registry();
  /** blocklist as configured now (a reload follows): the Blocklist panel shows its allow entries and maxBlocks. */
  let blocklist = config.blocklist;
  /** A change of the configuration file applies its outputs, as SIGHUP does. */
  let configWatch: { stop(): void } | null = null;
  let address: AddressInfo | null = null;
  let stopping = false;
  let status = 0;
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  let resolveStarted: () => void = () => {};
  const startedOrFailed = new Promise<void>((resolve) => {
    resolveStarted = resolve;
  });

  const pool = new WorkerPool({
    workers: options.workers,
    ...(options.listenFd === undefined ? {} : { listenFd: options.listenFd }),
    logger,
    now,
    events: {
      message: onMessage,
      started: () => resolveStarted(),
      exited: (worker, slot) => {
        ledger.releaseWorker(worker.id);
        workersById.delete(worker.id);
        dedupe?.workerGone(slot);
      },
      failed: (code) => {
        status = code;
        stop();
      },
      stopped: () => void finish(),
    },
  });
  const send = pool.send.bind(pool);

  /** A worker's request or report: the primary holds the one rate limit, connection count, window and stats. */
  function onMessage(worker: Worker, slot: number, message: WorkerMessage): void {
    switch (message.tc) {
      case 'listening':
        if (address === null) address = message.address as AddressInfo;
        // Started (or started again): the outputs running here, as last reloaded, are the ones its retention holds.
        send(worker, { tc: 'outputs', outputs: appliedOutputs });
        break;
      case 'stats':
        if (store) for (const delta of message.deltas) mergeStatsDelta(store.stats, delta);
        break;
      case 'conn-open': {
        workersById.set(worker.id, worker);
        const evicted = ledger.acquire(worker.id, message.conn, message.group);
        if (evicted === null) send(worker, { tc: 'conn-refused', conn: message.conn });
        for (const old of evicted ?? []) {
          const holder = workersById.get(old.worker);
          if (holder) send(holder, { tc: 'conn-refused', conn: old.conn, evicted: true });
        }
        break;
      }
      case 'conn-proven':
        ledger.prove(worker.id, message.conn);
        break;
      case 'conn-close':
        ledger.release(worker.id, message.conn);
        break;
      case 'syslog-tally':
        syslogTally?.merge(message.delta);
        break;
      case 'lease': {
        const reply = limiter.lease(message.sensor, message.need, message.want, now());
        send(worker, { tc: 'lease-reply', req: message.req, ...reply });
        break;
      }
      case 'dedupe-claim':
        if (dedupe) dedupe.onClaim(slot, message, (reply) => send(worker, reply));
        else send(worker, { tc: 'dedupe-claimed', req: message.req, error: 'deduplication is not set up' });
        break;
      case 'dedupe-settle':
        dedupe?.onSettle(slot, message);
        break;
      case 'config-request': {
        // What the collector runs, not the file as it is now (edited and not applied, or broken since); its
        // outputs as last applied, which a changed file applies without a reload: worker 1's first retention
        // pass, at its start, holds for them.
        const { config: running } = reloader.current;
        send(worker, {
          tc: 'config',
          loaded: { ...reloader.current, config: { ...running, outputs: appliedOutputs } },
        });
        break;
      }
      case 'reloaded':
        break;
    }
  }

  function announce(): void {
    logger.info(
      {
        address: address?.address,
        port: address?.port,
        dataDir,
        certificate: certificate?.tls.certPath,
        sha256: certificate?.tls.fingerprint,
        selfSigned: certificate?.tls.selfSigned,
        workers: pool.list(),
      },
      'threatcol is listening',
    );
  }

  async function startAdmin(opened: Store, decisions: Pick<DecisionsStore, 'watch'>): Promise<void> {
    admin = await startAdminListener({
      config,
      logger,
      store: opened,
      decisions,
      blocklist: () => blocklist,
      now,
      extraNotReady: () =>
        stopping
          ? ['stopping: finishing in-flight requests']
          : pool.listening < options.workers
            ? [`${pool.listening} of ${options.workers} workers listening`]
            : [],
      renderMetrics: withPrimaryMetrics(
        clusterMetricsRenderer(),
        () => outputs,
        syslogTally,
        () => engine,
        primaryRegistry,
      ),
      outputs: async () => (outputs ? outputs.report() : []),
      ...(syslogTally ? { syslogErrors: (sensor: string) => syslogTally.report(sensor) } : {}),
    });
  }

  /** Every worker is gone: the last counts they sent are written, then the primary is done. */
  async function finish(): Promise<void> {
    configWatch?.stop();
    await outputs?.stop();
    // Side by side: each waits at most a few seconds for a store that does not answer.
    await Promise.all([engine?.stop(), silenceWatch?.stop()]);
    certificate?.stop();
    await admin?.close();
    try {
      await store?.stats.stop();
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'cannot write stats');
    }
    await store?.close();
    logger.info({ status }, 'stopped');
    resolveStarted();
    resolveDone(status);
  }

  const reloader = createConfigReloader({
    loaded: options.loaded,
    read: options.reread ?? (() => reloader.current),
    logger,
  });
  applyLiveSettings(reloader, {
    logger,
    setRecordRate: (perSecond, burst) => limiter.configure(perSecond, burst),
    switchTls: (certPath, keyPath) => certificate?.switchTo(certPath, keyPath),
  });

  function stop(): void {
    if (stopping) return;
    stopping = true;
    logger.info({ workers: pool.size }, 'stopping: every worker finishes its in-flight requests');
    for (const server of owned) void server.close();
    pool.stop();
  }

  return {
    async start() {
      // Once, before the workers start: they would race to generate the self-signed certificate.
      const { owner, tls } = await prepareDataDirAndTls(options.loaded, logger);
      const opened = await openStore(config, { dataDir, logger, now });
      store = opened;
      const started = runOutputs({
        config,
        cursors: opened.outputs,
        dataDir,
        owner,
        logger,
        env: options.env ?? {},
        now,
        onReload: (next) => {
          appliedOutputs = next;
          pool.broadcast({ tc: 'outputs', outputs: next });
        },
      });
      outputs = started;
      // Before the workers take records: a new output's "now" is the start of serve (as in the daemon), bounded.
      await waitAtMost(started.started(), OUTPUTS_START_WAIT_MS);
      reloader.onReload(outputsLivePart(started, logger));
      // The engine (in its thread) counts blocks in force off the watched copy the dashboard's panel reads.
      const decisions = shareDecisionsWatch(opened.decisions);
      const running = startBoxEngine({
        config,
        dataDir,
        store: { decisions },
        logger,
        now,
      });
      engine = running;
      reloader.onReload({
        keys: ['blocklist'],
        apply: (_previous, next) => {
          running.configure(next.blocklist);
          blocklist = next.blocklist;
        },
      });
      configWatch = watchOutputsConfig(options.loaded.configPath, started, options.reread, logger);
      const index = await openWorkersDedupeIndex(config, { dataDir, logger, now });
      if (index) dedupe = new DedupeBroker(index);
      opened.stats.start(config.store.statsIntervalMs, (error) =>
        logger.error({ err: error.message }, 'cannot write stats'),
      );
      certificate = startCertificateUpkeep({
        tls,
        logger,
        now,
        pollIntervalMs: config.tls.pollIntervalMs,
        ...(options.tlsDebounceMs === undefined ? {} : { debounceMs: options.tlsDebounceMs }),
        ...(options.expiryCheckIntervalMs === undefined
          ? {}
          : { expiryCheckIntervalMs: options.expiryCheckIntervalMs }),
        watch: true,
        // The workers serve it: each reads the pair again on the reload below and logs what it serves.
        serve: () => {},
        report: false,
        onReload: (reason) => {
          logger.info({ reason, workers: pool.size }, 'reloading every worker');
          pool.broadcast({ tc: 'reload', loaded: reloader.current });
        },
      });
      logger.info({ workers: options.workers }, 'starting the workers');
      pool.start();
      await startedOrFailed;
      if (!pool.started || stopping) return;
      // Silent sensors: watched here, once per box, from the workers listening on; their records go to a
      // series of the primary's own (w0).
      const watch = startBoxSilenceWatch({
        config,
        store: opened,
        sensors: () => opened.registry.list(),
        records: {
          open: () =>
            opened.openRecordLog({
              workerId: 0,
              retentionIntervalMs: 0,
              ...(index ? { dedupe: index } : {}),
            }),
        },
        holder: () => boxId(dataDir),
        workers: true,
        metrics: primaryRegistry,
        logger,
        now,
      });
      silenceWatch = watch;
      reloader.onReload({ keys: ['sensors'], apply: (_previous, next) => watch.configure(next) });
      try {
        await startAdmin(opened, decisions);
      } catch (error) {
        stop();
        await done;
        throw error;
      }
      announce();
    },
    reload() {
      const outcome = reloader.reload();
      // A paused output (refused credentials, a missing token file) tries again now.
      outputs?.poke();
      certificate?.reload('SIGHUP');
      return outcome;
    },
    onConfigReloaded: (part) => reloader.onReload(part),
    stop,
    done,
    get address() {
      return address;
    },
    workers: () => pool.list(),
    addServer(server) {
      owned.push(server);
    },
  };
}

/**
 * The workers' metrics and, after them, the series only the primary holds: the outputs' (they run only here)
 * and the syslog input's (the workers' tallies summed here).
 */
function withPrimaryMetrics(
  render: () => Promise<{ contentType: string; body: string }>,
  outputs: () => RunningOutputs | null,
  syslogTally: SyslogTally | null,
  engine: () => RunningEngine | null,
  registry: Registry,
): () => Promise<{ contentType: string; body: string }> {
  registerOutputMetrics(registry, async () => (await outputs()?.metricRows()) ?? []);
  registerEngineMetrics(registry, engine);
  if (syslogTally) registerSyslogMetrics(registry, syslogTally);
  return async () => {
    const cluster = await render();
    return { contentType: cluster.contentType, body: `${cluster.body}\n${await registry.metrics()}` };
  };
}
