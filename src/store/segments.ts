// Names and lists the record log's segment files: `threats/YYYYMMDD-NNNNNN.ndjson`, sorted oldest first.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { THREATS_DIR } from './data-layout.js';

export const SEGMENT_PATTERN = /^(\d{8})-(\d{6})\.ndjson$/;

export interface SegmentName {
  file: string;
  path: string;
  day: string;
  seq: number;
}

export function threatsDir(dataDir: string): string {
  return join(dataDir, THREATS_DIR);
}

export function segmentFileName(day: string, seq: number): string {
  return `${day}-${String(seq).padStart(6, '0')}.ndjson`;
}

/** UTC day of an instant as YYYYMMDD. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
}

/** Segment files of the store, oldest first (names sort in time order). */
export function listSegments(dir: string): SegmentName[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const segments: SegmentName[] = [];
  for (const file of files.sort()) {
    const m = SEGMENT_PATTERN.exec(file);
    if (m) segments.push({ file, path: join(dir, file), day: m[1] as string, seq: Number(m[2]) });
  }
  return segments;
}
