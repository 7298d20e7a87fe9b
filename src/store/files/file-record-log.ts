// Append-only NDJSON segments with group commit: one write + one fdatasync per batch of concurrent requests.
import { mkdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { adoptOwner, type Owner, syncDir } from '../../data-dir/file-owner.js';
import { ThreatcolError } from '../../errors.js';
import { LogThrottle } from '../../log-throttle.js';
import { encodeLines } from '../../records/stored-line.js';
import type { StoredRecord } from '../../records/stored-record.js';
import { type FileOps, nodeFileOps, unwritten } from '../file-ops.js';
import type { AppendOptions, AppendResult, RecordLog } from '../store.js';
import { FreeSpaceGuard } from './free-space.js';
import { firstNulBefore, lineStartBefore, type ReadAt } from './line-boundary.js';
import { listSegments, segmentFileName, seriesSegments, threatsDir, utcDay } from './segments.js';

export interface FileRecordLogOptions {
  dataDir: string;
  segmentMaxBytes: number;
  queueMaxRecords: number;
  /** Bound on the queued records' JSON text, in UTF-8 bytes. */
  queueMaxBytes: number;
  /** Below this much free space on the data directory's filesystem, append answers 503 (0: no floor). */
  minFreeBytes?: number;
  logger: Logger;
  now?: () => number;
  fileOps?: FileOps;
  /** Owner new segments must keep (the data directory's), for a daemon run by root; null leaves ownership alone. */
  owner?: Owner | null;
  /** Called once when the log can no longer be trusted (a failed fdatasync): the daemon must stop. */
  onFatal?: (error: Error) => void;
  /** `serve --workers`: this worker's id, part of its segment names, so each worker appends to its own files. */
  workerId?: number | null;
  /** After each batch is durable: its record count and its fdatasync time (metrics). */
  onBatchSynced?: (records: number, seconds: number) => void;
  /** At most one line per this long for batches that failed to be written, by kind (default 10 s; tests). */
  failureLogIntervalMs?: number;
}

interface Pending {
  /** The records' lines, UTF-8: off the JS heap while they wait for the sync, so GC never copies them. */
  chunk: Buffer;
  ids: string[];
  /** The promise's own functions, called by `finish`: no wrapper closures per append living to the sync. */
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
  settled: Settled | undefined;
}

type Settled = NonNullable<AppendOptions['settled']>;

/** An append refused before it was queued: its `settled` hears of it too (a dedupe claim must not stay held). */
function refuse(error: Error, settled: Settled | undefined): Promise<never> {
  settled?.settle(error);
  return Promise.reject(error);
}

const SEGMENT_MODE = 0o640;
/** Syncs allowed at once: one finishing while the next batch is written and synced. */
const MAX_SYNCS_IN_FLIGHT = 2;

export async function openFileRecordLog(options: FileRecordLogOptions): Promise<FileRecordLog> {
  const log = new FileRecordLog(options);
  await log.open();
  return log;
}

export class FileRecordLog implements RecordLog {
  private readonly dir: string;
  private readonly ops: FileOps;
  private readonly now: () => number;
  private queue: Pending[] = [];
  private queued = 0;
  private queuedBytes = 0;
  private flushing = false;
  private scheduled = false;
  private fd = -1;
  private day = '';
  private seq = 0;
  private size = 0;
  private failed: Error | null = null;
  /**
   * A batch answered 503 for an I/O error, logged with its cause: the first of each kind at once, then at most
   * one line of it every FAILURE_LOG_MS, saying how many there were since (a disk gone bad fails every batch).
   */
  private readonly failures: LogThrottle;
  private closing = false;
  private drained: (() => void) | null = null;
  private syncsInFlight = 0;
  private fatalPending = false;
  /** Settles when the last batch written has been synced and answered. */
  private syncTail: Promise<void> = Promise.resolve();
  private readonly space: FreeSpaceGuard | null;
  private readonly worker: number | null;

  constructor(private readonly options: FileRecordLogOptions) {
    this.dir = threatsDir(options.dataDir);
    this.ops = options.fileOps ?? nodeFileOps;
    this.now = options.now ?? Date.now;
    this.worker = options.workerId ?? null;
    this.failures = new LogThrottle(options.logger, options.failureLogIntervalMs ?? FAILURE_LOG_MS);
    const freeBytes = this.ops.freeBytes ?? nodeFileOps.freeBytes;
    this.space =
      (options.minFreeBytes ?? 0) > 0 && freeBytes
        ? new FreeSpaceGuard({
            path: this.dir,
            minFreeBytes: options.minFreeBytes ?? 0,
            freeBytes,
            logger: options.logger,
          })
        : null;
  }

  get queuedRecords(): number {
    return this.queued;
  }

  /** File name of the segment being written, or null before the first write. Retention never deletes it. */
  get currentSegment(): string | null {
    return this.fd >= 0 ? segmentFileName(this.day, this.seq, this.worker) : null;
  }

  /** Opens this writer's newest segment, cutting off a torn last line or a hole left by a crash. */
  async open(): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    adoptOwner(this.dir, this.options.owner ?? null);
    const last = seriesSegments(listSegments(this.dir), this.worker).at(-1);
    if (!last) return;
    const fd = await this.ops.open(last.path, 'r+', SEGMENT_MODE);
    try {
      // Only the newest segment was being written when the daemon stopped, so only it can hold a power cut's
      // hole. Everything up to the last fdatasync is on the disk whole, so the hole lies after it: nothing
      // from the hole on was acknowledged, and the line holding it goes with all after it, like a torn last line.
      const size = await this.ops.fstatSize(fd);
      const end = await firstNulBefore(this.readAt(fd), size);
      this.size = await this.cutTornTail(fd, size, last.path, end);
      this.day = last.day;
      this.seq = last.seq;
    } finally {
      await this.ops.close(fd);
    }
  }

  append(records: StoredRecord[], options?: AppendOptions): Promise<AppendResult> {
    const settled = options?.settled;
    // statfs is asked at most once a second, so only the first request after that waits for it; the others
    // take the synchronous path (no extra promise per request).
    if (this.space && !this.failed && !this.closing) {
      if (this.space.stale()) {
        return this.space.ensureRoom().then(
          () => this.enqueue(records, settled),
          (error: Error) => refuse(error, settled),
        );
      }
      try {
        this.space.check();
      } catch (error) {
        return refuse(error as Error, settled);
      }
    }
    return this.enqueue(records, settled);
  }

  private enqueue(records: StoredRecord[], settled: Settled | undefined): Promise<AppendResult> {
    if (this.failed || this.closing) {
      return refuse(
        new ThreatcolError('UNAVAILABLE', 'the record store is closed', { headers: retryAfter }),
        settled,
      );
    }
    if (this.queued + records.length > this.options.queueMaxRecords) {
      return refuse(
        new ThreatcolError('UNAVAILABLE', 'the collector is overloaded; retry shortly', {
          headers: retryAfter,
        }),
        settled,
      );
    }
    // Records are bounded in count, and their text in bytes: a few huge records must not exhaust memory.
    const chunk = encodeLines(records);
    if (this.queuedBytes + chunk.length > this.options.queueMaxBytes) {
      return refuse(
        new ThreatcolError('UNAVAILABLE', 'the collector is overloaded; retry shortly', {
          headers: retryAfter,
        }),
        settled,
      );
    }
    const ids: string[] = new Array(records.length);
    for (let i = 0; i < records.length; i++) ids[i] = (records[i] as StoredRecord).id;
    return this.wait(chunk, ids, settled);
  }

  /**
   * Queues a chunk for the next batch. Its own function, so the promise's closures hold only the chunk and the
   * ids: made inside enqueue they held its whole scope, the built records with them, until the sync (MBs of
   * young objects the garbage collector copied and promoted under batched load).
   */
  private wait(chunk: Buffer, ids: string[], settled: Settled | undefined): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ chunk, ids, resolve, reject, settled });
      this.queued += ids.length;
      this.queuedBytes += chunk.length;
      this.schedule();
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (!this.isIdle()) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
      });
    }
    if (this.fd >= 0) {
      const fd = this.fd;
      this.fd = -1;
      await this.ops.close(fd);
    }
  }

  /** Flushes after the current I/O phase, so requests that arrived together share one sync. */
  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /**
   * Writes batch after batch. A batch's fdatasync runs in the background while the next batch is written,
   * so the records that arrive during one sync are on their way to disk when it ends (at most
   * MAX_SYNCS_IN_FLIGHT syncs at once); batches are still acknowledged in order, each only after its sync.
   */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    while (this.queue.length > 0 && !this.failed) {
      if (this.syncsInFlight >= MAX_SYNCS_IN_FLIGHT) await this.syncTail;
      if (this.queue.length === 0 || this.failed) break;
      const batch = this.queue;
      this.queue = [];
      await this.writeBatch(batch);
    }
    this.flushing = false;
    if (this.failed) this.finish(this.queue.splice(0), unavailable(this.failed));
    this.checkDrained();
  }

  private isIdle(): boolean {
    return !this.flushing && this.queue.length === 0 && this.syncsInFlight === 0;
  }

  private checkDrained(): void {
    if (!this.isIdle()) return;
    // The daemon stops on a fatal error: first every batch already written gets its 503.
    if (this.fatalPending && this.failed) {
      this.fatalPending = false;
      this.options.onFatal?.(this.failed);
    }
    if (this.drained) this.drained();
  }

  /** Writes a batch; its sync then runs in the background (see flush). */
  private async writeBatch(batch: Pending[]): Promise<void> {
    let count = 0;
    let bytes = 0;
    for (const p of batch) {
      bytes += p.chunk.length;
      count += p.ids.length;
    }
    // One vectored write of the requests' chunks as they are: no copy of the batch into one buffer.
    let chunks: Buffer[] = batch.map((p) => p.chunk);
    try {
      await this.ensureSegment(bytes);
    } catch (error) {
      this.failures.error({ err: error, records: count }, 'opening a segment failed; answered 503');
      this.finish(batch, unavailable(error));
      return;
    }
    const fd = this.fd;
    const start = this.size;
    try {
      while (chunks.length > 0) chunks = unwritten(chunks, await this.ops.writev(fd, chunks));
    } catch (error) {
      // Disk full or I/O error: take back the partial write so no reader ever sees a torn line.
      try {
        await this.ops.ftruncate(fd, start);
      } catch (truncateError) {
        this.fail(truncateError as Error);
        this.finish(batch, unavailable(error));
        return;
      }
      this.failures.error({ err: error, records: count }, 'writing records failed; answered 503');
      this.finish(batch, unavailable(error));
      return;
    }
    this.size = start + bytes;
    this.space?.wrote(bytes);
    this.syncsInFlight += 1;
    this.syncTail = this.syncBatch(fd, batch, count, this.syncTail);
  }

  /** fdatasync, then acknowledge the batch once every earlier batch is acknowledged. */
  private async syncBatch(
    fd: number,
    batch: Pending[],
    count: number,
    earlier: Promise<void>,
  ): Promise<void> {
    let error: Error | null = null;
    const started = this.options.onBatchSynced ? performance.now() : 0;
    try {
      await this.ops.fdatasync(fd);
      this.options.onBatchSynced?.(count, (performance.now() - started) / 1000);
    } catch (e) {
      error = e as Error;
    }
    await earlier;
    this.syncsInFlight -= 1;
    if (error) {
      // After a failed fsync the page cache may hold data the disk never got: nothing can be trusted.
      this.fail(error);
      this.finish(batch, unavailable(error));
    } else if (this.failed) {
      this.finish(batch, unavailable(this.failed));
    } else {
      this.finish(batch, null);
    }
    this.checkDrained();
  }

  private finish(batch: Pending[], error: Error | null): void {
    for (const p of batch) {
      this.queued -= p.ids.length;
      this.queuedBytes -= p.chunk.length;
      p.settled?.settle(error);
      if (error) p.reject(error);
      else p.resolve({ ids: p.ids, duplicates: 0 });
    }
  }

  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = error;
    this.options.logger.fatal({ err: error }, 'the record store failed to sync; stopping');
    this.fatalPending = true;
    this.checkDrained();
  }

  /** Rotates by UTC day and by size, before a batch that would cross the bound. */
  private async ensureSegment(incoming: number): Promise<void> {
    // The day never steps backwards: after a clock step back, records go on into the newest day's segment.
    const today = utcDay(this.now());
    const day = this.day === '' || today > this.day ? today : this.day;
    const full = this.size > 0 && this.size + incoming > this.options.segmentMaxBytes;
    if (this.fd >= 0 && day === this.day && !full) return;
    if (this.fd >= 0) {
      const old = this.fd;
      this.fd = -1;
      // Batches still syncing on the old segment must finish before its descriptor goes.
      await this.syncTail;
      await this.ops.close(old);
    }
    if (day !== this.day) {
      this.day = day;
      this.seq = 1;
    } else if (full || this.seq === 0) {
      this.seq += 1;
    }
    for (;;) {
      const path = `${this.dir}/${segmentFileName(this.day, this.seq, this.worker)}`;
      const fd = await this.ops.open(path, 'a+', SEGMENT_MODE);
      let size: number;
      try {
        size = await this.ops.fstatSize(fd);
        // Whatever file is reopened, a torn tail from a crash must not be glued to the next record.
        if (size > 0) size = await this.cutTornTail(fd, size, path);
        if (size > 0 && size + incoming > this.options.segmentMaxBytes) {
          await this.ops.close(fd);
          this.seq += 1;
          continue;
        }
        if (size === 0) adoptOwner(path, this.options.owner ?? null);
        // The directory entry must be durable before anything acknowledged lives in this file.
        syncDir(this.dir);
      } catch (error) {
        await this.ops.close(fd).catch(() => {});
        throw error;
      }
      this.fd = fd;
      this.size = size;
      return;
    }
  }

  /** Truncates `fd` after its last complete line before `end` (a hole, else the size); returns the size kept. */
  private async cutTornTail(fd: number, size: number, path: string, end = size): Promise<number> {
    const keep = await lineStartBefore(this.readAt(fd), end);
    if (keep === size) return size;
    await this.ops.ftruncate(fd, keep);
    await this.ops.fsync(fd);
    const segment = path.slice(this.dir.length + 1);
    // holeAt: where a power cut left zeros (pino leaves out a field that is undefined).
    const holeAt = end < size ? end : undefined;
    this.options.logger.warn(
      { segment, removedBytes: size - keep, keptBytes: keep, holeAt },
      'cut off a torn last line left by an unclean stop',
    );
    return keep;
  }

  private readAt(fd: number): ReadAt {
    return (buffer, length, position) => this.ops.read(fd, buffer, 0, length, position);
  }
}

const retryAfter = { 'Retry-After': '1' };

/** At most one line per this long for batches that failed to be written (failures). */
const FAILURE_LOG_MS = 10_000;

function unavailable(cause: unknown): ThreatcolError {
  if (cause instanceof ThreatcolError) return cause;
  return new ThreatcolError('UNAVAILABLE', 'the collector could not store the records; retry shortly', {
    headers: retryAfter,
    cause,
  });
}
