// Rebuilds the dedupe window at start from the newest segments, so a restart (even after kill -9) still
// recognises retries of deliveries stored just before it. Reads only the segments that can hold records
// of the window, and takes id, received_at and dedupe_key from each line without parsing the whole record.
// Each segment it reads is synced first: a batch written but not yet synced when the last run died (kill -9)
// is read like any other, and a retry of it is answered 200 as a duplicate without any write of its own.
import { open } from 'node:fs/promises';
import { ORDER_SLACK_MS } from '../../record-filter.js';
import { parseStoredRecord } from '../../record-shape.js';
import { firstReceivedAt } from '../segment-file.js';
import { openSegment } from '../segment-lines.js';
import { listSegments, type SegmentName, seriesOf } from '../segments.js';
import type { DedupeWindow } from './dedupe-window.js';

const CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;
const KEY_FIELD = ',"dedupe_key":"';

/** Loads the keys stored within the window before `now`; returns how many it remembered. */
export async function rebuildDedupeWindow(dir: string, window: DedupeWindow, now: number): Promise<number> {
  const cutoff = now - window.windowMs;
  const segments = await segmentsReaching(dir, cutoff - ORDER_SLACK_MS);
  let loaded = 0;
  for (const segment of segments) {
    await forEachLine(segment.path, (line) => {
      const entry = keyOf(line);
      if (entry && entry.at >= cutoff) {
        window.remember(entry.key, entry.id, entry.at);
        loaded += 1;
      }
    });
  }
  return loaded;
}

/**
 * Per writer series (one process, or each worker of `serve --workers`): its newest segments back to the
 * first one that starts before `oldest` (it may hold later records).
 */
async function segmentsReaching(dir: string, oldest: number): Promise<SegmentName[]> {
  const all = listSegments(dir);
  const picked: SegmentName[] = [];
  const done = new Set<string>();
  for (let i = all.length - 1; i >= 0; i--) {
    const segment = all[i] as SegmentName;
    const series = seriesOf(segment);
    if (done.has(series)) continue;
    picked.unshift(segment);
    const first = await firstReceivedAtOf(segment.path);
    if (first !== null && first < oldest) done.add(series);
  }
  return picked;
}

/** When the segment's first record was received (NaN when unreadable, null when gone). */
async function firstReceivedAtOf(path: string): Promise<number | null> {
  const handle = await openSegment(path);
  if (!handle) return null;
  try {
    return await firstReceivedAt(handle);
  } finally {
    await handle.close();
  }
}

/** id, time and key of a stored line that has a key; the common layout is read by position, anything else parsed. */
function keyOf(line: string): { key: string; id: string; at: number } | null {
  // `original` (an object) is the last field unless a key follows it: only then does the line end with `"}`.
  if (!line.endsWith('"}')) return null;
  const start = line.lastIndexOf(KEY_FIELD);
  if (start === -1) return null;
  const key = line.slice(start + KEY_FIELD.length, -2);
  const fast = /^\{"id":"([^"\\]{1,64})","received_at":"([^"\\]{1,40})"/.exec(line.slice(0, 160));
  if (fast && !key.includes('"') && !key.includes('\\')) {
    return { key, id: fast[1] as string, at: Date.parse(fast[2] as string) };
  }
  const record = parseStoredRecord(line);
  // The shape check does not cover dedupe_key: a damaged line may hold anything there.
  return typeof record?.dedupe_key === 'string' && record.dedupe_key !== ''
    ? { key: record.dedupe_key, id: record.id, at: Date.parse(record.received_at) }
    : null;
}

/** Calls `visit` with each complete line of the file, in order (a torn last line is skipped). */
async function forEachLine(path: string, visit: (line: string) => void): Promise<void> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return; // pruned meanwhile
  try {
    // What the window names as stored must be on the disk (a no-op for a segment already synced whole).
    await handle.datasync();
    const chunk = Buffer.allocUnsafe(CHUNK);
    // Bytes, not text: a chunk may end inside a multi-byte character.
    let carry: Buffer = Buffer.alloc(0);
    let position = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, CHUNK, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      const last = chunk.lastIndexOf(NEWLINE, bytesRead - 1);
      if (last === -1) {
        carry = Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
        continue;
      }
      const text = Buffer.concat([carry, chunk.subarray(0, last)]).toString('utf8');
      carry = Buffer.from(chunk.subarray(last + 1, bytesRead));
      for (const line of text.split('\n')) if (line !== '') visit(line);
    }
  } finally {
    await handle.close();
  }
}
