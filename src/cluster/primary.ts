// The primary of `serve --workers N`: owns no request. It prepares what must exist once (data directory,
// self-signed certificate), forks the workers that share the listener, forwards SIGHUP/SIGTERM, restarts a
// worker that dies (with back-off), stops everything with the status of a worker that exits 74 or 78, and
// is the single writer of sensor-stats.json, the rate-limit buckets and the connection counts. It also
// runs the admin listener (metrics aggregated from the workers). Retention runs in worker 1's writer.
import cluster, { type Worker } from 'node:cluster';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { type RunningAdmin, startAdminListener } from '../admin/start-admin.js';
import type { LoadedConfig } from '../config/load-config.js';
import { DAY_MS, startExpiryWarnings } from '../daemon/maintenance.js';
import { assertDataDirSafe } from '../data-dir/data-dir-safety.js';
import { ensureDataDir } from '../data-dir/ensure-data-dir.js';
import { EXIT } from '../errors.js';
import { clusterMetricsRenderer } from '../metrics/metrics.js';
import { RateLimiter } from '../server/rate-limit.js';
import { openStore, openWorkersDedupeIndex } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { loadTlsMaterial, readTlsPair, type TlsMaterial } from '../tls/tls-material.js';
import { watchTlsFiles } from '../tls/tls-watch.js';
import { ConnectionLedger } from './connection-ledger.js';
import { DedupeBroker } from './ipc-dedupe.js';
import { isWorkerMessage, type PrimaryMessage, type StatsDelta, type WorkerMessage } from './messages.js';
import { RestartBackoff } from './restart-backoff.js';

export interface PrimaryOptions {
  loaded: LoadedConfig;
  logger: Logger;
  workers: number;
  /** An inherited listening socket (systemd socket activation); the workers listen on it through cluster. */
  listenFd?: number;
  now?: () => number;
  expiryCheckIntervalMs?: number;
  tlsDebounceMs?: number;
}

/** Something the primary owns besides the workers (the admin listener of issue 14): closed on stop. */
export interface OwnedServer {
  close(): Promise<void> | void;
}

export interface Primary {
  /** Forks the workers; resolves once all listen (or once startup failed: then `done` has the status). */
  start(): Promise<void>;
  /** SIGHUP: every worker re-reads the registry and the TLS material. */
  reload(): void;
  /** SIGTERM: every worker finishes its in-flight requests and stops; then the primary writes the stats. */
  stop(): void;
  /** Resolves with the exit status once every worker is gone. */
  readonly done: Promise<number>;
  readonly address: AddressInfo | null;
  /** The live workers: slot (1..N, part of segment names) and pid. */
  workers(): { id: number; pid: number }[];
  addServer(server: OwnedServer): void;
}

/** Past this, a worker that does not stop is killed: inside systemd's 10 s stop bound (TimeoutStopSec). */
const STOP_KILL_MS = 9500;

export function createPrimary(options: PrimaryOptions): Primary {
  const { config, dataDir } = options.loaded;
  const { logger } = options;
  const now = options.now ?? Date.now;
  const slots = new Map<number, Worker>();
  const ready = new Set<number>();
  const backoff = new RestartBackoff({ now });
  const owned: OwnedServer[] = [];
  const limiter = new RateLimiter(config.rateLimit.recordsPerSecond, config.rateLimit.burst);
  const ledger = new ConnectionLedger(config.server.maxConnectionsPerAddress, config.server.maxConnections);
  let store: Store | null = null;
  /** Files backend with dedupe on: the one window every worker claims its keys in. */
  let dedupe: DedupeBroker | null = null;
  let admin: RunningAdmin | null = null;
  let tls: TlsMaterial | null = null;
  let chores: { stop(): void }[] = [];
  let address: AddressInfo | null = null;
  let started = false;
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

  const slotOf = (worker: Worker) => Number((worker as Worker & { slot?: number }).slot);
  const send = (worker: Worker, message: PrimaryMessage) => {
    if (worker.isConnected()) worker.send(message);
  };

  function fork(slot: number): void {
    const env: Record<string, string> = { TC_WORKER_ID: String(slot), TC_WORKERS: String(options.workers) };
    if (options.listenFd !== undefined) env.TC_LISTEN_FD = String(options.listenFd);
    const worker = cluster.fork(env) as Worker & { slot?: number };
    worker.slot = slot;
    slots.set(slot, worker);
    backoff.started(slot);
    worker.on('message', (message: unknown) => {
      if (isWorkerMessage(message)) onMessage(worker, slot, message);
    });
    worker.on('exit', (code, signal) => onExit(worker, slot, code, signal));
  }

  function onMessage(worker: Worker, slot: number, message: WorkerMessage): void {
    switch (message.tc) {
      case 'listening':
        ready.add(slot);
        if (address === null) address = message.address as AddressInfo;
        if (started) logger.info({ worker: slot, pid: worker.process.pid }, 'worker restarted and listening');
        else if (ready.size === options.workers) {
          started = true;
          resolveStarted();
        }
        break;
      case 'stats':
        for (const delta of message.deltas) applyDelta(delta);
        break;
      case 'conn-open':
        if (!ledger.acquire(worker.id, message.conn, message.group)) {
          send(worker, { tc: 'conn-refused', conn: message.conn });
        }
        break;
      case 'conn-close':
        ledger.release(worker.id, message.conn);
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
      case 'reloaded':
        break;
    }
  }

  function applyDelta(d: StatsDelta): void {
    const stats = store?.stats;
    if (!stats) return;
    const accepted = () => {
      if (d.accepted > 0 && d.last_accepted_at !== null) {
        stats.recordAccepted(d.sensor, d.last_address ?? '', d.accepted, d.last_accepted_at);
      }
    };
    const rejected = () => {
      for (let i = 0; i < d.rejected; i++) {
        stats.recordRejected(d.sensor, d.last_address, d.last_rejection_code ?? '', d.last_rejected_at ?? '');
      }
    };
    // The later of the two last, so that last seen and last address end as the worker's latest.
    if ((d.last_rejected_at ?? '') > (d.last_accepted_at ?? '')) {
      accepted();
      rejected();
    } else {
      rejected();
      accepted();
    }
  }

  function announce(): void {
    logger.info(
      {
        address: address?.address,
        port: address?.port,
        dataDir,
        certificate: tls?.certPath,
        sha256: tls?.fingerprint,
        selfSigned: tls?.selfSigned,
        workers: [...slots].map(([id, w]) => ({ id, pid: w.process.pid })),
      },
      'threatcol is listening',
    );
  }

  async function startAdmin(opened: Store): Promise<void> {
    admin = await startAdminListener({
      config,
      logger,
      store: opened,
      now,
      extraNotReady: () =>
        stopping
          ? ['stopping: finishing in-flight requests']
          : ready.size < options.workers
            ? [`${ready.size} of ${options.workers} workers listening`]
            : [],
      renderMetrics: clusterMetricsRenderer(),
    });
  }

  function onExit(worker: Worker, slot: number, code: number | null, signal: string | null): void {
    ledger.releaseWorker(worker.id);
    dedupe?.workerGone(slot);
    ready.delete(slot);
    if (slots.get(slot) === worker) slots.delete(slot);
    const pid = worker.process.pid;
    if (stopping) {
      logger.info({ worker: slot, pid, code, signal }, 'worker stopped');
    } else if (code === EXIT.IOERR || code === EXIT.CONFIG || !started) {
      // Restarting cannot help: a failed sync (the log cannot be trusted), a bad configuration, or a
      // worker that could not start at all. systemd sees the status and does not loop.
      logger.fatal(
        { worker: slot, pid, code, signal },
        'worker failed; stopping the collector with its status',
      );
      status = code ?? 1;
      stop();
    } else {
      const delayMs = backoff.nextDelay(slot);
      logger.error({ worker: slot, pid, code, signal, restartInMs: delayMs }, 'worker died; restarting it');
      setTimeout(() => {
        if (!stopping) fork(slot);
      }, delayMs).unref();
    }
    if (stopping && slots.size === 0) void finish();
  }

  /** Every worker is gone: the last counts they sent are written, then the primary is done. */
  async function finish(): Promise<void> {
    for (const chore of chores) chore.stop();
    chores = [];
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

  function reloadTls(reason: string): void {
    if (!tls) return;
    try {
      tls = readTlsPair(tls.certPath, tls.keyPath, tls.selfSigned);
    } catch {
      // Each worker logs the refusal and keeps its certificate.
    }
    logger.info({ reason, workers: slots.size }, 'reloading every worker');
    for (const worker of slots.values()) send(worker, { tc: 'reload' });
  }

  function stop(): void {
    if (stopping) return;
    stopping = true;
    logger.info({ workers: slots.size }, 'stopping: every worker finishes its in-flight requests');
    for (const server of owned) void server.close();
    for (const worker of slots.values()) worker.process.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const worker of slots.values()) {
        logger.error(
          { worker: slotOf(worker), pid: worker.process.pid },
          'worker did not stop in time; killing it',
        );
        worker.process.kill('SIGKILL');
      }
    }, STOP_KILL_MS);
    force.unref();
    if (slots.size === 0) void finish();
  }

  return {
    async start() {
      const owner = ensureDataDir(dataDir);
      assertDataDirSafe(dataDir);
      // Once, before the workers start: they would race to generate the self-signed certificate.
      const loadedTls = await loadTlsMaterial(config.tls, dataDir, owner);
      tls = loadedTls;
      if (loadedTls.generated) {
        logger.info(
          { certificate: loadedTls.certPath, sha256: loadedTls.fingerprint },
          'generated a self-signed certificate',
        );
      }
      const opened = await openStore(config, { dataDir, logger, now });
      store = opened;
      const index = await openWorkersDedupeIndex(config, { dataDir, logger, now });
      if (index) dedupe = new DedupeBroker(index);
      opened.stats.start(config.store.statsIntervalMs, (error) =>
        logger.error({ err: error.message }, 'cannot write stats'),
      );
      const material = tls;
      chores = [
        startExpiryWarnings({
          logger,
          now,
          intervalMs: options.expiryCheckIntervalMs ?? DAY_MS,
          certificate: () => tls ?? material,
        }),
        watchTlsFiles({
          certPath: material.certPath,
          keyPath: material.keyPath,
          pollIntervalMs: config.tls.pollIntervalMs,
          ...(options.tlsDebounceMs === undefined ? {} : { debounceMs: options.tlsDebounceMs }),
          onChange: () => reloadTls('certificate or key file changed'),
        }),
      ];
      logger.info({ workers: options.workers }, 'starting the workers');
      for (let slot = 1; slot <= options.workers; slot++) fork(slot);
      await startedOrFailed;
      if (!started || stopping) return;
      try {
        await startAdmin(opened);
      } catch (error) {
        stop();
        await done;
        throw error;
      }
      announce();
    },
    reload: () => reloadTls('SIGHUP'),
    stop,
    done,
    get address() {
      return address;
    },
    workers: () => [...slots].map(([id, w]) => ({ id, pid: w.process.pid ?? 0 })),
    addServer(server) {
      owned.push(server);
    },
  };
}
