// The files backend (DESIGN 4): registry, records, stats and retention in the data directory. Opening it
// creates nothing; the first change (a sensor added, the writer opened) creates the directory.
import { accessSync, constants, statfsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { ensureDataDir } from '../../data-dir/ensure-data-dir.js';
import type { Owner } from '../../data-dir/file-owner.js';
import { lazyOutputCursors } from '../lazy-output-cursors.js';
import { lazyRecordReader } from '../lazy-record-reader.js';
import type { SensorRegistry } from '../registry.js';
import { createSkippedRecords } from '../skipped-records.js';
import type { DedupeIndex, RecordLog, Store, StoreDeps, StoreHealth, StoreWriterOptions } from '../store.js';
import { createFileDecisions } from './file-decisions.js';
import { createFileRegistry } from './file-registry.js';
import { threatsDir } from './segments.js';
import { SensorStats } from './sensor-stats.js';

const HOUR_MS = 3_600_000;

export function openFileStore(config: Config, deps: StoreDeps): Store {
  const { dataDir, logger } = deps;
  const now = deps.now ?? Date.now;
  let owner: Owner | null = null;
  /** The data directory's owner, creating the directory on first use (only changes need it). */
  const ensureOwner = (): Owner => {
    owner ??= ensureDataDir(dataDir);
    return owner;
  };

  const files = createFileRegistry({
    dataDir,
    owner: null,
    now,
    pollIntervalMs: config.registry.pollIntervalMs,
    logger,
  });
  /** Changes go through a registry that knows the directory's owner, which exists only once created. */
  const writable = (): SensorRegistry =>
    createFileRegistry({
      dataDir,
      owner: ensureOwner(),
      now,
      pollIntervalMs: config.registry.pollIntervalMs,
    });
  const registry: SensorRegistry = {
    list: () => files.list(),
    rejectedEntries: () => files.rejectedEntries(),
    add: (sensor) => writable().add(sensor),
    revoke: (name) => writable().revoke(name),
    rotate: (name, graceMs) => writable().rotate(name, graceMs),
    set: (name, changes) => writable().set(name, changes),
    delete: (name) => writable().delete(name),
    importSensor: (sensor, options) => writable().importSensor(sensor, options),
    watch: (onChange, onError) => files.watch(onChange, onError),
  };

  const stats = new SensorStats(dataDir, now, () => ensureOwner());
  const skipped = createSkippedRecords(logger);

  return {
    backend: 'files',
    registry,
    reader: lazyRecordReader(async () => {
      const { createFileRecordReader } = await import('./read-records.js');
      return createFileRecordReader(dataDir, skipped, deps.fileOps);
    }, skipped),
    stats,
    outputs: lazyOutputCursors(async () => {
      const { createFileOutputCursors } = await import('./output-cursors.js');
      return createFileOutputCursors({ dataDir, owner: () => ensureOwner(), now, logger, skipped });
    }),
    decisions: createFileDecisions({
      dataDir,
      owner: () => ensureOwner(),
      pollIntervalMs: Math.min(250, config.registry.pollIntervalMs),
    }),

    async openRecordLog(options: StoreWriterOptions = {}): Promise<RecordLog> {
      // The writer's modules are imported by the writer only: CLI commands open this store to read.
      const [{ openFileRecordLog }, { withDedupe }, { startRetention }, { createOutputHold }] =
        await Promise.all([
          import('./file-record-log.js'),
          import('./dedupe/dedupe-record-log.js'),
          import('./retention.js'),
          import('./output-holds.js'),
        ]);
      const log = await openFileRecordLog({
        dataDir,
        segmentMaxBytes: config.store.segmentMaxBytes,
        // With `--workers`, each worker's queue holds its share: the configured bounds hold for the daemon.
        queueMaxRecords: share(config.store.queueMaxRecords, options.workers),
        queueMaxBytes: share(config.store.queueMaxBytes, options.workers),
        workerId: options.workerId ?? null,
        minFreeBytes: config.store.minFreeBytes,
        logger,
        now,
        owner: ensureOwner(),
        ...(deps.fileOps ? { fileOps: deps.fileOps } : {}),
        ...(options.onFatal ? { onFatal: options.onFatal } : {}),
        ...(options.onBatchSynced ? { onBatchSynced: options.onBatchSynced } : {}),
      });
      const index = options.dedupe ?? (await openDedupeIndex(config, deps.dataDir, deps.logger, now));
      const writer = index ? withDedupe(log, index) : log;
      // One pruner: the single process, or worker 1 (retention keeps every worker's newest segment).
      const prunes = (options.workerId ?? null) === null || options.workerId === 1;
      const outputsNow = options.outputs ?? (() => config.outputs);
      const retention = !prunes
        ? { stop() {} }
        : startRetention({
            dataDir,
            bounds: config.store.retention,
            logger,
            now,
            intervalMs: options.retentionIntervalMs ?? HOUR_MS,
            current: () => log.currentSegment,
            hold: (segments) =>
              createOutputHold({ dataDir, outputs: outputsNow(), segments, now: now(), logger }),
          });
      return {
        append: (records, appendOptions) => writer.append(records, appendOptions),
        get queuedRecords() {
          return writer.queuedRecords;
        },
        async close() {
          retention.stop();
          await writer.close();
        },
      };
    },

    async health(): Promise<StoreHealth> {
      return fileStoreHealth(dataDir, config.store.minFreeBytes);
    },

    async close() {
      skipped.flush();
    },
  };
}

/**
 * The dedupe window of one process (or of a primary for its workers), rebuilt from the newest segments of
 * every writer; null when deduplication is off.
 */
export async function openDedupeIndex(
  config: Config,
  dataDir: string,
  logger: Logger,
  now: () => number,
): Promise<DedupeIndex | null> {
  const windowMs = config.dedupe.windowSeconds * 1000;
  if (windowMs <= 0) return null;
  const [{ DedupeWindow }, { rebuildDedupeWindow }, { localDedupeIndex }] = await Promise.all([
    import('./dedupe/dedupe-window.js'),
    import('./dedupe/dedupe-rebuild.js'),
    import('./dedupe/dedupe-index.js'),
  ]);
  const window = new DedupeWindow(windowMs);
  const started = performance.now();
  const keys = await rebuildDedupeWindow(threatsDir(dataDir), window, now());
  logger.info(
    { keys, windowSeconds: config.dedupe.windowSeconds, ms: Math.round(performance.now() - started) },
    'dedupe window rebuilt from the newest segments',
  );
  return localDedupeIndex(window, now, logger);
}

function share(budget: number, workers = 1): number {
  return Math.max(1, Math.floor(budget / workers));
}

/** Writable data directory with room above `store.minFreeBytes`: what an append needs. */
function fileStoreHealth(dataDir: string, minFreeBytes: number): StoreHealth {
  try {
    accessSync(dataDir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    // Not there yet: the writer creates it at start (`check` warns about it separately).
    if (code === 'ENOENT') return { ok: true };
    return { ok: false, reason: `the data directory ${dataDir} is not writable: ${code}` };
  }
  if (minFreeBytes > 0) {
    try {
      const fs = statfsSync(dataDir);
      const free = fs.bavail * fs.bsize;
      if (free < minFreeBytes) {
        return {
          ok: false,
          reason: `${Math.floor(free / 1048576)} MiB free in ${dataDir}, below store.minFreeBytes`,
        };
      }
    } catch (error) {
      return { ok: false, reason: `cannot tell the free space of ${dataDir}: ${(error as Error).message}` };
    }
  }
  return { ok: true };
}
