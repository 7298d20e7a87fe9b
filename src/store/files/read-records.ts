// Reads stored records back: the last N from the end of the newest segments, then follows new ones live
// across segment rotation and retention, emitting only complete (`\n`-terminated) lines.
import { isPermissionError, permissionDenied, ThreatcolError } from '../../errors.js';
import { type DirWatch, watchDirs } from '../../watch-files.js';
import { type FileOps, nodeFileOps } from '../file-ops.js';
import { filterEndsAt, ORDER_SLACK_MS, recordMatcher } from '../record-filter.js';
import { type ParseStored, parseStoredRecord } from '../record-shape.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { FollowOptions, ReadRecentOptions, RecordCursor, RecordLine, RecordReader } from '../store.js';
import { scanRecords } from './scan-records.js';
import {
  completeEnd,
  firstReceivedAt,
  lineStartAtOrBefore,
  openSegmentFile,
  type SegmentFile,
  scanBackward,
} from './segment-file.js';
import { readLinesAt } from './segment-lines.js';
import { listSegments, SEGMENT_PATTERN, type SegmentName, seriesOf, threatsDir } from './segments.js';

export type { RecordLine } from '../store.js';

/** The files backend's cursor: a segment file name and the byte offset just after the last line read. */
interface FileCursor {
  file: string | null;
  offset: number;
  /**
   * The same per writer series (`serve --workers`: one per worker), keyed by seriesOf(). A series missing
   * here is read from its first segment; without `series`, `file`/`offset` alone (one writer).
   */
  series?: Record<string, SeriesPosition>;
}

interface SeriesPosition {
  file: string;
  offset: number;
}

const FORWARD_CHUNK = 1024 * 1024;
/** Lines held to sort across writers before they are emitted anyway (bounds memory when catching up). */
const MAX_PENDING_LINES = 10_000;

export function createFileRecordReader(
  dataDir: string,
  skipped?: SkippedRecords,
  ops: FileOps = nodeFileOps,
): RecordReader {
  const dir = threatsDir(dataDir);
  const openSegment = (path: string) => openSegmentFile(ops, path);
  const parse: ParseStored = (line, where) => {
    const record = parseStoredRecord(line);
    if (record === null) skipped?.note(where);
    return record;
  };
  return {
    readRecent: (options) =>
      readRecent(dir, openSegment, options, parse).then(
        ({ records, cursor, bounded }) => ({ records, cursor: { backend: 'files', ...cursor }, bounded }),
        (error: unknown) => {
          if (options.signal?.aborted && error === options.signal.reason) throw error;
          throw unreadable(dir, error);
        },
      ),
    follow: (from, options) => follow(dir, openSegment, toFileCursor(from), options, parse),
    skippedCount: () => skipped?.count ?? 0,
    scan: (since, visit, signal) =>
      scanRecords(dir, since, visit, signal, parse).catch((error: unknown) => {
        throw unreadable(dir, error);
      }),
  };
}

function toFileCursor(from: RecordCursor): FileCursor {
  if (from.backend !== 'files') {
    throw new ThreatcolError('INTERNAL', `a ${from.backend} cursor cannot follow the files backend`);
  }
  const cursor: FileCursor = {
    file: typeof from.file === 'string' ? from.file : null,
    offset: Number(from.offset) || 0,
  };
  if (typeof from.series === 'object' && from.series !== null) {
    cursor.series = from.series as Record<string, SeriesPosition>;
  }
  return cursor;
}

/**
 * The newest matching records. With `serve --workers` a day has one segment series per worker: a day's
 * segments are read together and merged by record id (ids are time-ordered), going back a day at a time
 * until `limit` records are found. The cursor holds the end of every series' newest segment.
 */
async function readRecent(
  dir: string,
  openSegment: (path: string) => Promise<SegmentFile | null>,
  options: ReadRecentOptions,
  parse: ParseStored,
): Promise<{ records: RecordLine[]; cursor: FileCursor; bounded: boolean }> {
  const { signal } = options;
  signal?.throwIfAborted();
  const segments = list(dir);
  const series: Record<string, SeriesPosition> = {};
  const cursor: FileCursor = { file: null, offset: 0, series };
  const ends = new Map<string, number>();
  for (const segment of newestOfEachSeries(segments)) {
    const handle = await openSegment(segment.path);
    if (!handle) continue;
    try {
      signal?.throwIfAborted();
      const end = await completeEnd(handle);
      ends.set(segment.file, end);
      series[seriesOf(segment)] = { file: segment.file, offset: end };
    } finally {
      await handle.close();
    }
  }
  const newest = segments.at(-1);
  if (newest) {
    cursor.file = newest.file;
    cursor.offset = ends.get(newest.file) ?? 0;
  }
  if (options.limit <= 0) return { records: [], cursor, bounded: false };

  const found: RecordLine[] = [];
  const match = recordMatcher(options.filter, options.match);
  const since = options.filter?.since;
  const oldest = since === undefined ? Number.NEGATIVE_INFINITY : since - ORDER_SLACK_MS;
  // Records after the window's end are not read: a segment whose first record is past it is passed over, so
  // they never count against the bound. (By its first record, not its day: `store migrate` writes old records
  // into today's segments.)
  const windowEnd = filterEndsAt(options.filter);
  const days = [...new Set(segments.map((s) => s.day))].reverse();
  let budget = options.maxBytes ?? Number.POSITIVE_INFINITY;
  let recordsLeft = options.maxRecords ?? Number.POSITIVE_INFINITY;
  for (const day of days) {
    const need = options.limit - found.length;
    const ofDay: RecordLine[] = [];
    let tooOld = true;
    // Each segment of the day from its end: none can hold more than `need` of the newest records.
    for (const segment of segments.filter((s) => s.day === day).reverse()) {
      const handle = await openSegment(segment.path);
      if (!handle) continue; // deleted by retention while we looked
      try {
        if (windowEnd !== Number.POSITIVE_INFINITY && (await firstReceivedAt(handle)) > windowEnd) {
          tooOld = false;
          continue;
        }
        const end = ends.get(segment.file) ?? (await completeEnd(handle));
        let fromSegment = 0;
        const stopped = await scanBackward(
          handle,
          end,
          signal,
          (line, bytes) => {
            signal?.throwIfAborted();
            budget -= bytes;
            // The record bound ends the read as the byte bound does (the budget is what both check).
            if (--recordsLeft <= 0) budget = 0;
            const record = parse(line, segment.file);
            if (!record) return false;
            if (Date.parse(record.received_at) < oldest) return true;
            if (!match(record)) return false;
            ofDay.push({ line, record });
            return ++fromSegment >= need;
          },
          (unvisited) => budget - unvisited <= 0,
        );
        if (!stopped || fromSegment >= need) tooOld = false;
      } finally {
        await handle.close();
      }
    }
    found.push(...byId(ofDay).slice(-need));
    if (found.length >= options.limit || tooOld || budget <= 0) break;
  }
  return { records: byId(found), cursor, bounded: budget <= 0 && found.length < options.limit };
}

/** The newest segment of every writer's series (see segments.ts). */
function newestOfEachSeries(segments: SegmentName[]): SegmentName[] {
  const newest = new Map<string, SegmentName>();
  for (const s of segments) newest.set(seriesOf(s), s);
  return [...newest.values()];
}

/** Records in id order (time-ordered UUIDv7); a stable sort, so one writer's order stays as written. */
function byId(lines: RecordLine[]): RecordLine[] {
  return [...lines].sort((a, b) => (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0));
}

function follow(
  dir: string,
  openSegment: (path: string) => Promise<SegmentFile | null>,
  from: FileCursor,
  options: FollowOptions,
  parse: ParseStored,
): Promise<void> {
  const { signal } = options;
  const match = recordMatcher(options.filter, options.match);
  const emit = (batch: RecordLine[]) => {
    const kept = batch.filter((r) => match(r.record));
    return kept.length > 0 ? options.onRecords(kept) : undefined;
  };
  const positions = startPositions(from);
  let reading = false;
  let again = false;
  let watch: DirWatch | null = null;

  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      watch?.stop();
      watch = null;
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onAbort = () => finish();

    const pump = async (): Promise<void> => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          await readAvailable();
        } while (again && !signal.aborted);
      } catch (error) {
        finish(unreadable(dir, error));
      } finally {
        reading = false;
      }
    };

    /**
     * Reads each writer's current segment to its last complete line and moves on to the series' newer
     * segments once they exist; lines read from several writers in one pass are emitted in id order.
     */
    const readAvailable = async (): Promise<void> => {
      const pending: RecordLine[] = [];
      const flush = async () => {
        if (pending.length > 0) await emit(byId(pending.splice(0)));
      };
      const collect = async (batch: RecordLine[]) => {
        pending.push(...batch);
        if (pending.length >= MAX_PENDING_LINES) await flush();
      };
      const bySeries = new Map<string, SegmentName[]>();
      for (const segment of list(dir)) {
        const key = seriesOf(segment);
        bySeries.set(key, [...(bySeries.get(key) ?? []), segment]);
      }
      for (const [key, segments] of bySeries) {
        let position = positions.get(key);
        for (;;) {
          if (signal.aborted) return;
          if (!position) {
            const first = segments[0] as SegmentName;
            position = { file: first.file, offset: 0 };
            positions.set(key, position);
          }
          const current = position.file;
          const gone = !(await readForward(openSegment, dir, position, signal, collect, parse));
          const next = list(dir).find((s) => seriesOf(s) === key && s.file > current);
          if (!next) break;
          // The writer never returns to a segment once it opened a newer one: one more read drains it.
          if (!gone) await readForward(openSegment, dir, position, signal, collect, parse);
          position = { file: next.file, offset: 0 };
          positions.set(key, position);
        }
      }
      await flush();
    };

    if (signal.aborted) return finish();
    signal.addEventListener('abort', onAbort);
    // Any change in the directory (a write, a new segment) or a poll tick: read what is new.
    watch = watchDirs(new Map([[dir, null]]), () => void pump(), {
      pollIntervalMs: options.pollIntervalMs ?? 500,
      keepAlive: true,
    });
    void pump();
  });
}

/** Where each writer series' reading resumes, from a cursor of readRecent (or a one-writer cursor). */
function startPositions(from: FileCursor): Map<string, SeriesPosition> {
  const positions = new Map<string, SeriesPosition>();
  if (from.series) {
    for (const [key, p] of Object.entries(from.series)) positions.set(key, { ...p });
  } else if (from.file !== null) {
    const m = SEGMENT_PATTERN.exec(from.file);
    positions.set(m?.[2] === undefined ? '' : `w${Number(m[2])}`, { file: from.file, offset: from.offset });
  }
  return positions;
}

/** Emits the complete lines after the position and advances it. False when the segment no longer exists. */
async function readForward(
  openSegment: (path: string) => Promise<SegmentFile | null>,
  dir: string,
  cursor: SeriesPosition,
  signal: AbortSignal,
  onRecords: (records: RecordLine[]) => void | Promise<void>,
  parse: ParseStored,
): Promise<boolean> {
  const handle = await openSegment(`${dir}/${cursor.file}`);
  if (!handle) return false;
  try {
    const size = await handle.size();
    if (size < cursor.offset) cursor.offset = size;
    // The writer takes back a failed batch by truncating to a line boundary; if the file grew again past the
    // cursor, the cursor may now sit inside a new line: go back to that line's start instead of dropping it.
    if (cursor.offset > 0) cursor.offset = await lineStartAtOrBefore(handle, cursor.offset);
    while (cursor.offset < size && !signal.aborted) {
      const lines = await readLinesAt(handle, cursor.offset, size, FORWARD_CHUNK, parse, cursor.file);
      const last = lines.at(-1);
      if (!last) break;
      const batch: RecordLine[] = [];
      for (const { line, record } of lines) if (record) batch.push({ line, record });
      cursor.offset = last.end;
      if (batch.length > 0) await onRecords(batch);
    }
    return true;
  } finally {
    await handle.close();
  }
}

function list(dir: string): SegmentName[] {
  try {
    return listSegments(dir);
  } catch (error) {
    throw unreadable(dir, error);
  }
}

export function unreadable(dir: string, error: unknown): ThreatcolError {
  if (error instanceof ThreatcolError) return error;
  if (isPermissionError(error)) return permissionDenied(error, dir, 'read the records in');
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  // The same code as any other data directory the command cannot use (see ensureDataDir).
  return new ThreatcolError(
    'CONFIG_INVALID',
    `cannot read the records in ${dir}: ${reason} (run as the service user or root)`,
    { cause: error },
  );
}
