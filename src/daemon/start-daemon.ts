// Starts the collector: data directory, TLS, record store, registry watch, listener; stops it cleanly.
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { addressGroup } from '../address-group.js';
import { type RunningAdmin, startAdminListener } from '../admin/start-admin.js';
import { BODY_SHARES, type LoadedConfig } from '../config/load-config.js';
import type { OutputConfig } from '../config/outputs-schema.js';
import { type ClosedReason, listenerSlots } from '../connection-slots.js';
import { boxId, startBoxEngine } from '../decisions/box-engine.js';
import { registerEngineMetrics, registerFeedMetrics } from '../decisions/decision-metrics.js';
import type { RunningEngine } from '../decisions/engine.js';
import { startFeedService } from '../decisions/feed-service.js';
import { shareDecisionsWatch } from '../decisions/watched-decisions.js';
import { enrichingRecordLog, startEnricher } from '../enrich/enricher.js';
import { ThreatcolError } from '../errors.js';
import { ActivityLog } from '../inputs/https/activity-log.js';
import { Authenticator } from '../inputs/https/auth.js';
import { createCollectorServer } from '../inputs/https/create-server.js';
import { type RateLimit, RateLimiter } from '../inputs/https/rate-limit.js';
import { BodyBudget } from '../inputs/https/read-body.js';
import {
  createSyslogListener,
  type SyslogListener,
  syslogConfigured,
} from '../inputs/syslog/syslog-listener.js';
import type { SyslogTally } from '../inputs/syslog/syslog-tally.js';
import { createMetrics, type Metrics, shareMetricsWithPrimary } from '../metrics/metrics.js';
import { registerOutputMetrics } from '../metrics/output-metrics.js';
import { registerSyslogMetrics } from '../metrics/syslog-metrics.js';
import { runOutputs } from '../outputs/run-outputs.js';
import type { OutputsDeps, RunningOutputs } from '../outputs/start-outputs.js';
import { type BoxSilenceWatch, startBoxSilenceWatch } from '../sensors/box-silence-watch.js';
import type { FileOps } from '../store/file-ops.js';
import { openStore } from '../store/open-store.js';
import type { Sensor } from '../store/registry.js';
import type { DedupeIndex, RecordLog, SensorStatsStore } from '../store/store.js';
import { waitAtMost } from '../wait-at-most.js';
import { prepareDataDirAndTls, startCertificateUpkeep } from './certificate-upkeep.js';
import { createConfigReloader, type LivePart, type ReloadOutcome } from './config-reload.js';
import { listenError } from './listen-error.js';
import { applyLiveSettings, outputsLivePart } from './live-settings.js';
import { watchOutputsConfig } from './outputs-reload.js';

export interface DaemonOptions {
  loaded: LoadedConfig;
  logger: Logger;
  now?: () => number;
  fileOps?: FileOps;
  /** An inherited listening socket (systemd socket activation). */
  listenFd?: number;
  /** How often retention runs after the run at start (default hourly). */
  retentionIntervalMs?: number;
  /** How often the certificate expiry is checked after the check at start (default daily). */
  expiryCheckIntervalMs?: number;
  /** Quiet time after a change of the certificate or key file before it is reloaded (default 500 ms). */
  tlsDebounceMs?: number;
  /** Metrics to count into (default: a fresh registry with process metrics). */
  metrics?: Metrics;
  /**
   * false in a --workers worker: the primary serves the admin listener (startAdminListener with
   * clusterMetricsRenderer) and the worker only shares its metrics (shareMetricsWithPrimary).
   */
  adminListener?: boolean;
  /** `serve --workers`: this process is one of the primary's workers (src/cluster/worker.ts). */
  worker?: WorkerRole;
  /** Where outputs read secrets named by `tokenEnv` & co. (default: none). */
  env?: Record<string, string | undefined>;
  /** Output retry timing, for tests. */
  outputTiming?: Pick<OutputsDeps, 'retryBaseMs' | 'retryCapMs' | 'pausedRetryMs'>;
  /** Reads the configuration again for a reload (serve: the same file, environment and flags); none: kept. */
  reread?: () => LoadedConfig;
}

/**
 * What changes in a worker: its own segments; stats, rate-limit tokens and connection counts through the
 * primary; memory budgets split between the workers; no admin listener, file watch or expiry warning
 * (the primary has them and forwards reloads).
 */
export interface WorkerRole {
  id: number;
  /** How many workers share the configured memory budgets. */
  workers: number;
  stats: SensorStatsStore;
  limiter: RateLimit;
  /**
   * Tells the primary of a connection kept (connection-slots.ts: every listener's in one table); returns how to
   * tell it the connection proved itself. `closed`: the listener's word when the primary closes it for a cap.
   */
  admitConnection: (socket: Socket, group: string, closed: (reason: ClosedReason) => void) => () => void;
  /** Where the syslog listener counts (null: syslog is off); the worker reports it to the primary. */
  syslogTally: SyslogTally | null;
  /** Files backend: the primary's dedupe window (null: deduplication is off, or the NATS stream does it). */
  dedupe: DedupeIndex | null;
  /**
   * The outputs as the primary runs them now (it tells each reload): retention, in the worker that prunes,
   * keeps what they have not passed.
   */
  outputs: () => Record<string, OutputConfig>;
}

export interface Daemon {
  address: AddressInfo;
  /** Where the admin listener listens (null: admin.listen is ""). */
  adminAddress: AddressInfo | null;
  /** SHA-256 fingerprint of the certificate served to new connections. */
  readonly fingerprint: string;
  /** SIGHUP: re-read the configuration, the registry and the TLS material. */
  reload(): ReloadOutcome;
  /** Registers a part of the configuration that applies live on reload (config-reload.ts). */
  onConfigReloaded(part: LivePart): void;
  /** SIGTERM: stop accepting, finish in-flight requests, sync, resolve `done` with 0. */
  stop(): void;
  /** Resolves with the exit code once the daemon has stopped. */
  done: Promise<number>;
}

const SHUTDOWN_GRACE_MS = 8000;
/** The whole stop, in-flight requests included: under the unit's TimeoutStopSec=15s. */
const STOP_LIMIT_MS = 12_000;

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, dataDir } = options.loaded;
  const logger = options.logger;
  const now = options.now ?? Date.now;
  const worker = options.worker;
  const { owner, tls: initialTls } = await prepareDataDirAndTls(options.loaded, logger);

  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });
  let stopping = false;
  /** What stopping is doing now, named in the log when it takes too long. */
  let stopStep = '';
  let fatal = false;
  const metrics = options.metrics ?? createMetrics();
  if (worker) shareMetricsWithPrimary(metrics);

  const backend = await openStore(config, {
    dataDir,
    logger,
    now,
    ...(options.fileOps ? { fileOps: options.fileOps } : {}),
  });
  /** The outputs as last applied (at start, then each reload): retention keeps what they have not passed. */
  let appliedOutputs = config.outputs;
  let store: RecordLog;
  try {
    store = await backend.openRecordLog({
      outputs: worker?.outputs ?? (() => appliedOutputs),
      onFatal: () => {
        fatal = true;
        stop();
      },
      onBatchSynced: (records, seconds) => metrics.batchSynced(records, seconds),
      ...(worker ? { workerId: worker.id, workers: worker.workers } : {}),
      ...(worker?.dedupe ? { dedupe: worker.dedupe } : {}),
      ...(options.retentionIntervalMs === undefined
        ? {}
        : { retentionIntervalMs: options.retentionIntervalMs }),
    });
  } catch (error) {
    await backend.close();
    throw error;
  }
  // Country and AS of each record's public addresses (src/enrich/), added as every input's batch is appended.
  const enricher = config.enrich.enabled ? startEnricher(config.enrich, { logger }) : null;
  if (enricher) store = enrichingRecordLog(store, enricher);
  metrics.sources({ queuedRecords: () => store.queuedRecords });
  // One forwarder per output per box (DESIGN 13): here in a single process, in the primary under --workers.
  const outputs: RunningOutputs | null = worker
    ? null
    : runOutputs({
        config,
        cursors: backend.outputs,
        dataDir,
        owner,
        logger,
        env: options.env ?? {},
        now,
        onReload: (next) => {
          appliedOutputs = next;
        },
        ...options.outputTiming,
      });
  if (outputs) registerOutputMetrics(metrics.registry, () => outputs.metricRows());
  // Decisions (DESIGN 15): the engine once per box (here, or the primary under --workers), in a thread of its
  // own; every serving process serves the feeds. The feeds, the dashboard's panel and the engine's count of
  // blocks in force read one watched copy.
  const decisions = shareDecisionsWatch(backend.decisions);
  const engine: RunningEngine | null = worker
    ? null
    : startBoxEngine({
        config,
        dataDir,
        store: { decisions },
        logger,
        now,
      });
  const feeds = startFeedService({
    decisions,
    blocklist: config.blocklist,
    logger,
    now,
    // Each worker counts the failed logins it sees: the collector's allowance is shared out among them.
    shareOf: worker?.workers ?? 1,
  });
  registerFeedMetrics(metrics.registry, feeds);
  /** blocklist as configured now (a reload follows): the Blocklist panel shows its allow entries and maxBlocks. */
  let blocklist = config.blocklist;
  if (engine) registerEngineMetrics(metrics.registry, () => engine);
  const configWatch = outputs
    ? watchOutputsConfig(options.loaded.configPath, outputs, options.reread, logger)
    : { stop() {} };

  const auth = new Authenticator();
  let syslog: SyslogListener | null = null;
  let lastSensors: Sensor[] = [];
  let known = -1;
  let registryRead: () => void = () => {};
  const firstRead = new Promise<void>((resolve) => {
    registryRead = resolve;
  });
  const watch = backend.registry.watch(
    (sensors) => {
      auth.update(sensors);
      lastSensors = sensors;
      syslog?.updateSensors(sensors);
      registryRead();
      if (sensors.length !== known) logger.info({ sensors: sensors.length }, 'sensor registry loaded');
      known = sensors.length;
    },
    (error) => {
      logger.error({ err: error.message }, 'cannot read the sensor registry; keeping the previous one');
      registryRead();
    },
  );

  // A worker counts for the primary, the single writer of the stats; it reports at least every second.
  const stats = worker?.stats ?? backend.stats;
  stats.start(worker ? Math.min(1000, config.store.statsIntervalMs) : config.store.statsIntervalMs, (error) =>
    logger.error({ err: error.message }, 'cannot write stats'),
  );
  const activity = new ActivityLog(logger, config.log.rejectIntervalMs, now);
  activity.start(config.log.summaryIntervalMs);
  /** Silent sensors (docs/operations.md): watched once per box (here, or the primary), from listening on. */
  let silenceWatch: BoxSilenceWatch | null = null;

  const recordLimiter = worker
    ? null
    : new RateLimiter(config.rateLimit.recordsPerSecond, config.rateLimit.burst);
  // Bytes: each worker enforces its share of the sensor's byte rate (the record rate is leased from the
  // primary); a burst always fits one largest body.
  const byteRate = (c: typeof config) => c.rateLimit.bytesPerSecond / (worker?.workers ?? 1);
  const byteBurst = (c: typeof config) => Math.max(c.server.maxBodyBytes, c.rateLimit.bytesPerSecond);
  const byteLimiter = new RateLimiter(byteRate(config), byteBurst(config));
  // One table of connection slots for the HTTPS port and the syslog listeners (connection-slots.ts).
  const slots = listenerSlots(config.server, {
    groupOf: addressGroup,
    ...(worker ? { shared: worker.admitConnection } : {}),
  });
  const collector = createCollectorServer({
    config,
    auth,
    store,
    stats,
    limiter: worker?.limiter ?? (recordLimiter as RateLimiter),
    byteLimiter,
    activity,
    // A worker holds its part of the total, never less than one sensor's quarter holding a largest body.
    bodyBudget: new BodyBudget(
      worker
        ? Math.max(
            BODY_SHARES * config.server.maxBodyBytes,
            Math.floor(config.server.maxInflightBodyBytes / worker.workers),
          )
        : config.server.maxInflightBodyBytes,
      1 / BODY_SHARES,
    ),
    slots,
    feeds: (req, res, name, authenticated) => feeds.handle(req, res, name, authenticated),
    now,
    tls: initialTls,
    logger,
    metrics,
  });

  const certificate = startCertificateUpkeep({
    tls: initialTls,
    logger,
    now,
    pollIntervalMs: config.tls.pollIntervalMs,
    ...(options.tlsDebounceMs === undefined ? {} : { debounceMs: options.tlsDebounceMs }),
    ...(options.expiryCheckIntervalMs === undefined
      ? {}
      : { expiryCheckIntervalMs: options.expiryCheckIntervalMs }),
    watch: !worker,
    serve: (next) => {
      collector.setTls(next);
      syslog?.setTls(next);
    },
  });

  /** The one teardown list, for a failed start and for stop(): everything started above, in reverse. */
  const cleanUp = async () => {
    stopStep = 'closing the syslog listeners';
    await syslog?.close();
    configWatch.stop();
    stopStep = 'stopping the outputs';
    await outputs?.stop();
    // Side by side: each waits at most a few seconds for a store that does not answer.
    stopStep = 'stopping the decisions engine and the silence watcher';
    await Promise.all([engine?.stop(), silenceWatch?.stop()]);
    feeds.stop();
    certificate.stop();
    enricher?.stop();
    watch.stop();
    activity.stop();
    stopStep = 'writing the counts';
    try {
      await stats.stop();
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'cannot write stats');
    }
    stopStep = 'closing the record store';
    await store.close();
    await backend.close();
  };
  // Listen once the sensors are known (NATS: the first read of the bucket), so the first requests are not
  // answered 503; NATS down at start must not keep serve from starting, so only for a bounded time.
  // And once every output has fixed where it starts: a new output's "now" is the start of serve, so the first
  // records are forwarded too. Bounded the same way (a NATS consumer that cannot be made yet is retried); the
  // two waits run side by side.
  await Promise.all([
    waitAtMost(firstRead, Math.min(config.nats.publishTimeoutMs, REGISTRY_WAIT_MS)),
    outputs ? waitAtMost(outputs.started(), OUTPUTS_START_WAIT_MS) : null,
  ]);
  let address: AddressInfo;
  try {
    address = await collector.listen(options.listenFd === undefined ? undefined : { fd: options.listenFd });
  } catch (error) {
    await cleanUp();
    throw listenError(error as NodeJS.ErrnoException, config.server.host, config.server.port);
  }

  // DESIGN 14: off unless configured. Under --workers each worker serves it on the listeners node:cluster
  // shares, counting for the primary (which serves the tally and its metrics).
  if (syslogConfigured(config)) {
    syslog = createSyslogListener({
      config,
      tls: certificate.tls,
      recordLog: store,
      stats,
      logger,
      now,
      ...(worker?.syslogTally ? { tally: worker.syslogTally } : {}),
      // Each worker holds its share of the unfinished messages' budget, as of the HTTPS bodies'.
      ...(worker ? { heldBytes: Math.floor(config.syslog.maxHeldBytes / worker.workers) } : {}),
      slots,
    });
    syslog.updateSensors(lastSensors);
    if (!worker) registerSyslogMetrics(metrics.registry, syslog.tally);
    try {
      const at = await syslog.listen();
      logger.info(
        { tlsPort: at.tls?.port ?? null, tcpPort: at.tcp?.port ?? null, relpPort: at.relp?.port ?? null },
        'syslog listening',
      );
    } catch (error) {
      await collector.close(0);
      await cleanUp();
      const e = error as NodeJS.ErrnoException;
      throw new ThreatcolError('LISTEN_FAILED', `cannot open the syslog listener: ${e.message}`, {
        cause: e,
      });
    }
  }

  if (!worker) {
    silenceWatch = startBoxSilenceWatch({
      config,
      store: backend,
      sensors: () => lastSensors,
      records: { append: (records) => store.append(records) },
      holder: () => boxId(dataDir),
      metrics: metrics.registry,
      logger,
      now,
    });
  }
  let admin: RunningAdmin | null = null;
  try {
    if (options.adminListener !== false && !worker) {
      admin = await startAdminListener({
        config,
        logger,
        store: backend,
        decisions,
        now,
        extraNotReady: () =>
          fatal
            ? ['the record store failed; the daemon is stopping']
            : stopping
              ? ['stopping: finishing in-flight requests']
              : auth.loaded
                ? []
                : ['the sensor registry has not been read yet: every request gets 503'],
        renderMetrics: () => metrics.render(),
        blocklist: () => blocklist,
        ...(outputs ? { outputs: () => outputs.report() } : {}),
        ...(syslog ? { syslogErrors: (sensor: string) => syslog?.tally.report(sensor) ?? null } : {}),
      });
    }
  } catch (error) {
    await collector.close(0);
    await cleanUp();
    throw error;
  }
  logger.info(
    {
      address: address.address,
      port: address.port,
      dataDir,
      certificate: certificate.tls.certPath,
      sha256: certificate.tls.fingerprint,
      selfSigned: certificate.tls.selfSigned,
    },
    worker ? 'worker listening' : 'threatcol is listening',
  );

  const reloader = createConfigReloader({
    loaded: options.loaded,
    read: options.reread ?? (() => reloader.current),
    logger,
    announce: !worker,
  });
  applyLiveSettings(reloader, {
    logger,
    ...(recordLimiter
      ? { setRecordRate: (perSecond: number, burst: number) => recordLimiter.configure(perSecond, burst) }
      : {}),
    setByteRate: (next) => byteLimiter.configure(byteRate(next), byteBurst(next)),
    switchTls: (certPath, keyPath) => certificate.switchTo(certPath, keyPath),
  });
  if (outputs) reloader.onReload(outputsLivePart(outputs, logger));
  reloader.onReload({ keys: ['sensors'], apply: (_p, next) => silenceWatch?.configure(next) });
  reloader.onReload({
    keys: ['blocklist'],
    apply: (_previous, next) => {
      engine?.configure(next.blocklist);
      feeds.configure(next.blocklist);
      blocklist = next.blocklist;
    },
  });

  function stop(): void {
    if (stopping) return;
    stopping = true;
    logger.info(
      { fatal },
      fatal ? 'stopping after a store failure' : 'stopping: finishing in-flight requests',
    );
    // Bounded as a whole: a step that hangs (a store that never answers) is named in the log, and serve exits
    // before systemd's stop timeout kills it without a word. Records were stored before they were answered.
    const limit = setTimeout(() => {
      logger.error(
        { step: stopStep, limitMs: STOP_LIMIT_MS },
        `stopping did not finish in ${STOP_LIMIT_MS / 1000} s (${stopStep}): exiting without it`,
      );
      resolveDone(new ThreatcolError('INTERNAL').exitCode);
    }, STOP_LIMIT_MS);
    void (async () => {
      stopStep = 'finishing in-flight requests';
      await collector.close(fatal ? 0 : SHUTDOWN_GRACE_MS);
      stopStep = 'closing the admin listener';
      await admin?.close();
      await cleanUp();
      clearTimeout(limit);
      logger.info('stopped');
      resolveDone(fatal ? new ThreatcolError('STORE_FAILED').exitCode : 0);
    })();
  }

  return {
    address,
    adminAddress: admin?.address ?? null,
    get fingerprint() {
      return certificate.tls.fingerprint;
    },
    reload() {
      const outcome = reloader.reload();
      watch.reload();
      // A paused output (refused credentials, a missing token file) tries again now.
      outputs?.poke();
      certificate.accept();
      certificate.reload('SIGHUP');
      return outcome;
    },
    onConfigReloaded: (part) => reloader.onReload(part),
    stop,
    done,
  };
}

/** How long serve waits for the sensor registry before listening anyway. */
const REGISTRY_WAIT_MS = 5000;

/** How long serve waits for its outputs to fix where they start before taking records anyway. */
export const OUTPUTS_START_WAIT_MS = 5000;
