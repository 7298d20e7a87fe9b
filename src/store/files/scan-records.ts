// Streams every record received since an instant, oldest segment first, for aggregations (`threats stats`).
// Segments whose UTC day ended before `since` are skipped by name, without being opened.
import { open } from 'node:fs/promises';
import type { StoredRecord } from '../../records/stored-record.js';
import { startsWith } from '../record-head.js';
import type { ParseStored } from '../record-shape.js';
import { isoTimeMs } from '../stored-time.js';
import { listSegments } from './segments.js';

const DAY_MS = 86_400_000;
const CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ID = Buffer.from('{"id":"');
const RECEIVED_AT = Buffer.from('","received_at":"');

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
      // The part of a line left at a read's end moves to the buffer's start; the next read lands after it.
      let buf = Buffer.allocUnsafe(CHUNK);
      let carry = 0;
      for (;;) {
        if (signal?.aborted) return;
        if (carry === buf.length) {
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, carry);
          buf = bigger;
        }
        const { bytesRead } = await handle.read(buf, carry, buf.length - carry, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const end = carry + bytesRead;
        let start = 0;
        let nl = buf.indexOf(NEWLINE, start);
        while (nl !== -1 && nl < end) {
          // Older lines are skipped on their received_at alone, read off the bytes, without decoding the line.
          if (nl > start && !(receivedAtOf(buf, start, nl) < since)) {
            const record = parse(buf.toString('utf8', start, nl), segment.file);
            if (record && Date.parse(record.received_at) >= since) {
              const pending = visit(record);
              if (pending instanceof Promise) await pending;
            }
          }
          start = nl + 1;
          nl = buf.indexOf(NEWLINE, start);
        }
        carry = end - start;
        buf.copy(buf, 0, start, end);
      }
    } finally {
      await handle.close();
    }
  }
}

/** received_at read by position in the usual layout (`{"id":"…","received_at":"…"`), NaN otherwise. */
function receivedAtOf(buf: Buffer, start: number, stop: number): number {
  if (!startsWith(buf, start, stop, ID)) return Number.NaN;
  const idEnd = quoteAt(buf, start + ID.length, Math.min(stop, start + ID.length + 65));
  if (idEnd === start + ID.length || !startsWith(buf, idEnd, stop, RECEIVED_AT)) return Number.NaN;
  const from = idEnd + RECEIVED_AT.length;
  const to = quoteAt(buf, from, Math.min(stop, from + 41));
  return to === from ? Number.NaN : isoTimeMs(buf, from, to);
}

/**
 * The first `"` in `buf[from, to)`, with only ASCII and no backslash before it (the text is then what the parse
 * gives); `from` when there is none.
 */
function quoteAt(buf: Buffer, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const c = buf[i] as number;
    if (c === QUOTE) return i;
    if (c === BACKSLASH || c >= 0x80) return from;
  }
  return from;
}

function dayEnd(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8))) + DAY_MS;
}
