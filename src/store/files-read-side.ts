// The read side of the files backend behind the store seam (reader with filters and scan, stats, registry,
// health), for the admin listener and `threats stats` until store/open-store.ts provides the whole Store.
import { constants } from 'node:fs';
import { access, open, statfs } from 'node:fs/promises';
import type { StoredRecord } from '../records/stored-record.js';
import { createFileRegistry } from './file-registry.js';
import { createFileRecordReader, type RecordCursor as FileCursor } from './read-records.js';
import { listSegments, threatsDir, utcDay } from './segments.js';
import { readStatsFile } from './sensor-stats.js';
import type { RecordCursor, RecordFilter, RecordReader, Store, StoreHealth } from './store.js';

export type ReadSide = Pick<Store, 'reader' | 'stats' | 'registry' | 'health'>;

export function filterMatches(filter: RecordFilter | undefined, record: StoredRecord): boolean {
  if (!filter) return true;
  if (filter.sensor !== undefined && record.sensor !== filter.sensor) return false;
  if (filter.endpoint !== undefined && record.endpoint !== filter.endpoint) return false;
  if (filter.minCriticality !== undefined && record.criticality < filter.minCriticality) return false;
  if (filter.since !== undefined && Date.parse(record.received_at) < filter.since) return false;
  return true;
}

export function openFilesReadSide(options: {
  dataDir: string;
  minFreeBytes: number;
  /** False once the writer failed (the daemon is stopping). */
  writerOk?: () => boolean;
}): ReadSide {
  const { dataDir } = options;
  const files = createFileRecordReader(dataDir);
  const reader: RecordReader = {
    async readRecent(o) {
      const both = (r: StoredRecord) => filterMatches(o.filter, r) && (o.match === undefined || o.match(r));
      const since = o.filter?.since;
      const { records, cursor } = await files.readRecent({
        limit: o.limit,
        match: both,
        ...(since === undefined ? {} : { notBefore: since }),
      });
      return { records, cursor: { backend: 'files', ...cursor } };
    },
    follow(from, o) {
      const cursor = from as RecordCursor & FileCursor;
      return files.follow(
        { file: cursor.file, offset: cursor.offset },
        {
          signal: o.signal,
          ...(o.pollIntervalMs === undefined ? {} : { pollIntervalMs: o.pollIntervalMs }),
          onRecords: (batch) => {
            const kept = batch.filter(
              (l) => filterMatches(o.filter, l.record) && (o.match === undefined || o.match(l.record)),
            );
            return kept.length > 0 ? o.onRecords(kept) : undefined;
          },
        },
      );
    },
    scan: (since, visit, signal) => scanSegments(threatsDir(dataDir), since, visit, signal),
  };
  const registry = createFileRegistry({ dataDir, owner: null });
  return {
    reader,
    registry,
    stats: {
      read: async () => readStatsFile(dataDir).sensors,
      recordAccepted() {},
      recordRejected() {},
      start() {},
      stop: async () => {},
    },
    async health(): Promise<StoreHealth> {
      if (options.writerOk && !options.writerOk()) return { ok: false, reason: 'the record store failed' };
      const dir = threatsDir(dataDir);
      try {
        await access(dir, constants.W_OK);
      } catch (error) {
        return { ok: false, reason: `${dir} is not writable (${(error as NodeJS.ErrnoException).code})` };
      }
      if (options.minFreeBytes > 0) {
        const s = await statfs(dir);
        const free = s.bavail * s.bsize;
        if (free < options.minFreeBytes) {
          return {
            ok: false,
            reason: `free space on ${dir} is ${free} bytes, below store.minFreeBytes (${options.minFreeBytes})`,
          };
        }
      }
      return { ok: true };
    },
  };
}

/**
 * Visits records received at or after `since`, segment by segment, oldest first. A segment of a UTC day before
 * `since`'s day holds only records received before it (a record is written after it is received): skipped.
 */
async function scanSegments(
  dir: string,
  since: number,
  visit: (record: StoredRecord) => void,
  signal?: AbortSignal,
): Promise<void> {
  const firstDay = Number.isFinite(since) && since > 0 ? utcDay(since) : '';
  const sinceIso = Number.isFinite(since) && since > 0 ? new Date(since).toISOString() : '';
  for (const segment of listSegments(dir)) {
    if (segment.day < firstDay) continue;
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(segment.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed by retention meanwhile
      throw error;
    }
    try {
      let carry = '';
      const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
      for (;;) {
        if (signal?.aborted) return;
        const { bytesRead } = await handle.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        const text = carry + buf.toString('utf8', 0, bytesRead);
        let start = 0;
        let nl = text.indexOf('\n', start);
        while (nl !== -1) {
          visitLine(text.slice(start, nl), sinceIso, visit);
          start = nl + 1;
          nl = text.indexOf('\n', start);
        }
        carry = text.slice(start);
      }
      // A last line without its newline is being written (or torn): not a stored record yet.
    } finally {
      await handle.close();
    }
  }
}

function visitLine(line: string, sinceIso: string, visit: (record: StoredRecord) => void): void {
  if (line === '') return;
  // Stored lines start {"id":"…","received_at":"…": compare the time before parsing the whole line.
  if (sinceIso !== '') {
    const at = line.indexOf('"received_at":"');
    if (at !== -1 && at < 80 && line.slice(at + 15, at + 39) < sinceIso) return;
  }
  let record: StoredRecord;
  try {
    record = JSON.parse(line) as StoredRecord;
  } catch {
    return;
  }
  if (record === null || typeof record !== 'object' || typeof record.received_at !== 'string') return;
  if (sinceIso !== '' && record.received_at < sinceIso) return;
  visit(record);
}
