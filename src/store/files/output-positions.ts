// Where an output stands in the files backend: its cursor file (per writer series a segment and the offset
// after the last record passed), written atomically and durably, and the positions derived from the segments.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUTS_DIR } from '../../data-dir/data-layout.js';
import { type Owner, writeFileAtomic, writeFileAtomicAsync } from '../../data-dir/file-owner.js';
import { lineStartBefore } from './line-boundary.js';
import { openSegment, readLinesAt } from './segment-lines.js';
import { listSegments, type SegmentName, seriesOf } from './segments.js';

export interface SeriesPosition {
  file: string;
  offset: number;
  /** Id of the record that ends at `offset`, to recognise a segment cut back under the cursor (absent: unknown). */
  id?: string;
}

/** The cursor file's content. A series missing from `series` is read from its first segment. */
export interface CursorFile {
  version: 1;
  name: string;
  series: Record<string, SeriesPosition>;
  lastId: string | null;
  updatedAt: string;
  /** Who wrote it last (a feed, or `outputs replay`): a feed adopts positions it did not write itself. */
  writer: string;
  /** The id of the last `outputs replay` these positions took (output-replay.ts). */
  replayId?: string;
}

const CHUNK = 1024 * 1024;

export function outputsDir(dataDir: string): string {
  return join(dataDir, OUTPUTS_DIR);
}

export function cursorPath(dataDir: string, name: string): string {
  return join(outputsDir(dataDir), `${name}.cursor.json`);
}

export function readCursor(dataDir: string, name: string): CursorFile | null {
  try {
    const parsed = JSON.parse(readFileSync(cursorPath(dataDir, name), 'utf8')) as CursorFile;
    return parsed && typeof parsed.series === 'object' ? parsed : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export function writeCursor(dataDir: string, cursor: CursorFile, owner: Owner | null): void {
  mkdirSync(outputsDir(dataDir), { recursive: true, mode: 0o750 });
  writeFileAtomic(cursorPath(dataDir, cursor.name), `${JSON.stringify(cursor)}\n`, 0o640, owner);
}

/** The same, off the event loop: a feed writes its cursor at every batch, inside the serving process. */
export async function writeCursorAsync(
  dataDir: string,
  cursor: CursorFile,
  owner: Owner | null,
): Promise<void> {
  mkdirSync(outputsDir(dataDir), { recursive: true, mode: 0o750 });
  await writeFileAtomicAsync(cursorPath(dataDir, cursor.name), `${JSON.stringify(cursor)}\n`, 0o640, owner);
}

/** Segments grouped by writer series, each oldest first. */
export function segmentsBySeries(threats: string): Map<string, SegmentName[]> {
  const bySeries = new Map<string, SegmentName[]>();
  for (const segment of listSegments(threats)) {
    const key = seriesOf(segment);
    bySeries.set(key, [...(bySeries.get(key) ?? []), segment]);
  }
  return bySeries;
}

/** The end of every series' newest segment (after its last complete line): an output starting 'now'. */
export async function endPositions(threats: string): Promise<Record<string, SeriesPosition>> {
  const positions: Record<string, SeriesPosition> = {};
  for (const [key, segments] of segmentsBySeries(threats)) {
    const newest = segments.at(-1) as SegmentName;
    const handle = await openSegment(newest.path);
    if (!handle) continue;
    try {
      const size = await handle.size();
      const end = await lineStartBefore(handle.read, size);
      positions[key] = { file: newest.file, offset: end };
    } finally {
      await handle.close();
    }
  }
  return positions;
}

/**
 * Per series, the start of its first record received at or after `since` (the end of its newest segment when
 * none is): where `outputs replay --since` and `startAt` put an output.
 */
export async function positionsAt(threats: string, since: number): Promise<Record<string, SeriesPosition>> {
  const ends = await endPositions(threats);
  const positions: Record<string, SeriesPosition> = {};
  for (const [key, segments] of segmentsBySeries(threats)) {
    const found = await firstAtOrAfter(segments, since);
    const end = ends[key];
    if (found) positions[key] = found;
    else if (end) positions[key] = end;
  }
  return positions;
}

async function firstAtOrAfter(segments: SegmentName[], since: number): Promise<SeriesPosition | null> {
  for (const segment of segments) {
    if (dayEnd(segment.day) <= since) continue;
    const handle = await openSegment(segment.path);
    if (!handle) continue;
    try {
      const size = await handle.size();
      let offset = 0;
      while (offset < size) {
        const lines = await readLinesAt(handle, offset, size, CHUNK);
        if (lines.length === 0) break;
        for (const line of lines) {
          if (line.record && Date.parse(line.record.received_at) >= since) {
            return { file: segment.file, offset };
          }
          offset = line.end;
        }
      }
    } finally {
      await handle.close();
    }
  }
  return null;
}

/** Whether `position` (undefined: the series was never read) is past every byte of `segment`. */
export function hasPassed(position: SeriesPosition | undefined, segment: SegmentName, size: number): boolean {
  if (!position) return false;
  return position.file > segment.file || (position.file === segment.file && position.offset >= size);
}

export function dayEnd(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8))) + 86_400_000;
}

/**
 * The positions, each checked against its segment: after a power cut or a failed write the writer cuts a
 * segment back, and appends new records where the cursor may already point. A position whose line is no
 * longer the record it passed moves back to the first record after that one (its id: ids grow with time), so
 * what is appended there is never skipped; it may re-send.
 */
export async function checkPositions(
  threats: string,
  series: Record<string, SeriesPosition>,
): Promise<{
  series: Record<string, SeriesPosition>;
  moved: { series: string; from: SeriesPosition; to: SeriesPosition }[];
}> {
  const checked: Record<string, SeriesPosition> = {};
  const moved: { series: string; from: SeriesPosition; to: SeriesPosition }[] = [];
  for (const [key, position] of Object.entries(series)) {
    checked[key] = position;
    if (position.id === undefined || position.offset === 0) continue;
    const handle = await openSegment(join(threats, position.file));
    if (!handle) continue; // removed by retention: the feed moves on to the series' next segment
    try {
      const readAt = handle.read;
      const size = await handle.size();
      if (position.offset <= size) {
        const start = await lineStartBefore(readAt, position.offset - 1);
        const [line] = await readLinesAt(handle, start, position.offset, position.offset - start);
        if (line?.end === position.offset && line.record?.id === position.id) continue;
      }
      let offset = 0;
      let found: number | null = null;
      while (found === null && offset < size) {
        const lines = await readLinesAt(handle, offset, size, CHUNK);
        if (lines.length === 0) break;
        for (const line of lines) {
          if (line.record && line.record.id > position.id) {
            found = offset;
            break;
          }
          offset = line.end;
        }
      }
      const to: SeriesPosition = { file: position.file, offset: found ?? offset };
      checked[key] = to;
      moved.push({ series: key, from: position, to });
    } finally {
      await handle.close();
    }
  }
  return { series: checked, moved };
}
