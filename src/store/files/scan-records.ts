// Streams every record received since an instant, oldest segment first, for aggregations (`threats stats`).
// Segments whose UTC day ended before `since` are skipped by name, without being opened.
import { open } from 'node:fs/promises';
import type { StoredRecord } from '../../records/stored-record.js';
import type { ParseStored } from '../record-shape.js';
import { listSegments } from './segments.js';

const DAY_MS = 86_400_000;
const CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;
const RECEIVED_AT = /^\{"id":"[^"\\]{1,64}","received_at":"([^"\\]{1,40})"/;

/**
 * A segment named for day D holds only records received by the end of D (the writer's day never steps
 * back), so one whose day ended before `since` holds nothing to visit. A torn last line is not visited.
 */
export async function scanRecords(
  dir: string,
  since: number,
  visit: (record: StoredRecord) => unknown,
  signal: AbortSignal | undefined,
  parse: ParseStored,
): Promise<void> {
  for (const segment of listSegments(dir)) {
    if (signal?.aborted) return;
    if (dayEnd(segment.day) <= since) continue;
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(segment.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // pruned by retention meanwhile
      throw error;
    }
    try {
      let position = 0;
      let carry: Buffer = Buffer.alloc(0);
      const chunk = Buffer.allocUnsafe(CHUNK);
      for (;;) {
        if (signal?.aborted) return;
        const { bytesRead } = await handle.read(chunk, 0, CHUNK, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk;
        const end = carry.length > 0 ? buf.length : bytesRead;
        let start = 0;
        let nl = buf.indexOf(NEWLINE, start);
        while (nl !== -1 && nl < end) {
          if (nl > start) {
            const line = buf.toString('utf8', start, nl);
            // Older lines are skipped on their received_at alone, without parsing the record.
            if (!(receivedAtOf(line) < since)) {
              const record = parse(line, segment.file);
              if (record && Date.parse(record.received_at) >= since) {
                const pending = visit(record);
                if (pending instanceof Promise) await pending;
              }
            }
          }
          start = nl + 1;
          nl = buf.indexOf(NEWLINE, start);
        }
        carry = Buffer.from(buf.subarray(start, end));
      }
    } finally {
      await handle.close();
    }
  }
}

/** received_at read by position in the usual layout (`{"id":"…","received_at":"…"`), NaN otherwise. */
function receivedAtOf(line: string): number {
  const m = RECEIVED_AT.exec(line.slice(0, 160));
  return m ? Date.parse(m[1] as string) : Number.NaN;
}

function dayEnd(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8))) + DAY_MS;
}
