// Names and lists the record log's segment files: `threats/YYYYMMDD-NNNNNN.ndjson` (one process) or
// `threats/YYYYMMDD-wK-NNNNNN.ndjson` (worker K of `serve --workers`), sorted by day, writer, then sequence.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { THREATS_DIR } from '../../data-dir/data-layout.js';

export const SEGMENT_PATTERN = /^(\d{8})-(?:w(\d{1,4})-)?(\d{6})\.ndjson$/;

export interface SegmentName {
  file: string;
  path: string;
  day: string;
  seq: number;
  /** The worker that writes this segment's series, or null for the single-process daemon's series. */
  worker: number | null;
}

export function threatsDir(dataDir: string): string {
  return join(dataDir, THREATS_DIR);
}

export function segmentFileName(day: string, seq: number, worker: number | null = null): string {
  return `${day}-${worker === null ? '' : `w${worker}-`}${String(seq).padStart(6, '0')}.ndjson`;
}

/** Key of a segment's writer series: one writer appends to a series, each segment after the previous one. */
export function seriesOf(segment: SegmentName): string {
  return segment.worker === null ? '' : `w${segment.worker}`;
}

/** Segments of one writer (a worker id, or null for the single-process daemon), oldest first. */
export function seriesSegments(segments: SegmentName[], worker: number | null): SegmentName[] {
  return segments.filter((s) => s.worker === worker);
}

/** UTC day of an instant as YYYYMMDD. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
}

/**
 * Segment files of the store, grouped by day (oldest first), then by writer, then in sequence. Within one
 * writer's series the order is write order; across writers, readers order records by id.
 */
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
    if (!m) continue;
    const worker = m[2] === undefined ? null : Number(m[2]);
    segments.push({ file, path: join(dir, file), day: m[1] as string, seq: Number(m[3]), worker });
  }
  return segments;
}
