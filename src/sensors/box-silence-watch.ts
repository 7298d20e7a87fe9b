// The silence watcher of one collector box (the single serving process, or the primary under --workers), with
// its /metrics series, following reloads of sensors.expectEvery; on NATS, under the cluster's lease.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { StoredRecord } from '../records/stored-record.js';
import type { Sensor } from '../store/registry.js';
import type { RecordLog, Store } from '../store/store.js';
import { registerSilenceMetrics } from './silence-metrics.js';
import { silenceRecord } from './silence-record.js';
import { type SilenceWatcher, startSilenceWatcher } from './silence-watcher.js';

/** A lease outlives its holder by this much: a collector that died is replaced within it. */
const LEASE_TTL_MS = 15_000;
/** A worker reports its counts to the primary at least this often (cluster/ipc-stats.ts), plus the trip. */
const WORKER_REPORT_MS = 1500;

export interface BoxSilenceWatch extends SilenceWatcher {
  configure(next: Config): void;
}

export function startBoxSilenceWatch(options: {
  config: Config;
  store: Pick<Store, 'stats' | 'decisions' | 'backend'>;
  /** The sensors now: the process's watched copy of the registry, or a read of it. */
  sensors: () => Sensor[] | Promise<Sensor[]>;
  /**
   * Where the collector's records go: the process's RecordLog, or (the primary of --workers, which has none)
   * one opened at the first event and closed at stop.
   */
  records: { append: (records: StoredRecord[]) => Promise<unknown> } | { open: () => Promise<RecordLog> };
  /** This collector's id among the cluster's (NATS): the holder of the lease. */
  holder: () => string;
  /** The primary of --workers: its workers report what they accepted every second. */
  workers?: boolean;
  /** Where the series go (the process's /metrics); absent: none. */
  metrics?: Registry;
  logger: Logger;
  now?: () => number;
}): BoxSilenceWatch {
  const now = options.now ?? Date.now;
  let expectEvery = options.config.sensors.expectEvery;
  const where = options.records;
  let opened: Promise<RecordLog> | null = null;
  const append =
    'append' in where
      ? where.append
      : async (records: StoredRecord[]) => {
          opened ??= where.open().catch((error: Error) => {
            opened = null;
            throw error;
          });
          return (await opened).append(records);
        };
  const watcher = startSilenceWatcher({
    sensors: options.sensors,
    stats: options.store.stats,
    configuredExpectEvery: () => expectEvery,
    report: async (event) => {
      await append([silenceRecord(event, now())]);
    },
    // NATS: one watcher per cluster, whichever collector holds the lease.
    ...(options.store.backend === 'nats'
      ? { lease: { decisions: options.store.decisions, holder: options.holder(), ttlMs: LEASE_TTL_MS } }
      : {}),
    // What another process accepted reaches the stats read here this late at most: a worker's report, another
    // collector's stats write (NATS; its own are read back from the bucket too).
    slackMs:
      options.store.backend === 'nats'
        ? options.config.store.statsIntervalMs + 1000
        : options.workers
          ? WORKER_REPORT_MS
          : 0,
    logger: options.logger,
    now,
  });
  if (options.metrics) registerSilenceMetrics(options.metrics, () => watcher, now);
  return {
    ...watcher,
    async stop() {
      await watcher.stop();
      await (await opened?.catch(() => null))?.close();
    },
    configure(next) {
      expectEvery = next.sensors.expectEvery;
    },
  };
}
