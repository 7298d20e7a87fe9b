// What retention must keep for the outputs (DESIGN 13): a segment an enabled output has not passed stays,
// unless the output's `maxLag` lets it go; then the records it had not passed are counted, logged and kept
// on record in `<dataDir>/outputs/NAME.skipped.ndjson` for `outputs list`, never dropped silently.
import { closeSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type OutputConfig, parseMaxLag } from '../../config/outputs-schema.js';
import { appendFileDurably } from '../../data-dir/file-owner.js';
import { dayEnd, hasPassed, outputsDir, readCursor, type SeriesPosition } from './output-positions.js';
import { type SegmentName, seriesOf } from './segments.js';

export interface SegmentHold {
  /** True when an output still needs the segment (retention keeps it). */
  keeps(segment: SegmentName): boolean;
  /** Retention deletes the segment: count what each output had not passed (before the file goes). */
  removing(segment: SegmentName): void;
}

interface Holder {
  name: string;
  series: Record<string, SeriesPosition>;
  bound: { ms: number } | { bytes: number } | null;
  /** Bytes of segments this output has not passed (for a bytes bound). */
  behind: number;
}

const NEWLINE = 0x0a;

export function createOutputHold(options: {
  dataDir: string;
  outputs: Record<string, OutputConfig>;
  segments: readonly SegmentName[];
  now: number;
  logger: Logger;
}): SegmentHold {
  const holders: Holder[] = [];
  for (const [name, output] of Object.entries(options.outputs)) {
    if (!output.enabled) continue;
    const cursor = readCursor(options.dataDir, name);
    // An output that never ran has no position yet: it starts at 'now' (or the oldest kept) when it does.
    if (!cursor) continue;
    const holder: Holder = { name, series: cursor.series, bound: parseMaxLag(output.maxLag), behind: 0 };
    for (const s of options.segments) if (!passed(holder, s)) holder.behind += sizeOf(s.path);
    holders.push(holder);
  }
  const allows = (holder: Holder, segment: SegmentName): boolean => {
    if (passed(holder, segment)) return true;
    const bound = holder.bound;
    if (bound === null) return false;
    if ('ms' in bound) return dayEnd(segment.day) <= options.now - bound.ms;
    return holder.behind > bound.bytes;
  };
  return {
    keeps: (segment) => holders.some((h) => !allows(h, segment)),
    removing(segment) {
      for (const holder of holders) {
        if (passed(holder, segment)) continue;
        const position = holder.series[seriesOf(segment)];
        const from = position?.file === segment.file ? position.offset : 0;
        const records = countLines(segment.path, from);
        holder.behind -= sizeOf(segment.path);
        recordSkipped(options.dataDir, holder.name, segment.file, records, options.now);
        options.logger.warn(
          { output: holder.name, segment: segment.file, records, maxLag: holder.bound },
          'retention removed records an output had not forwarded (outputs.NAME.maxLag)',
        );
      }
    },
  };
}

function passed(holder: Holder, segment: SegmentName): boolean {
  return hasPassed(holder.series[seriesOf(segment)], segment, sizeOf(segment.path));
}

export function skippedPath(dataDir: string, name: string): string {
  return join(outputsDir(dataDir), `${name}.skipped.ndjson`);
}

/** How many records retention removed before an output forwarded them, in all. */
export function skippedRecords(dataDir: string, name: string): number {
  try {
    let total = 0;
    for (const line of readFileSync(skippedPath(dataDir, name), 'utf8').split('\n')) {
      if (line === '') continue;
      try {
        total += Number((JSON.parse(line) as { records: number }).records) || 0;
      } catch {}
    }
    return total;
  } catch {
    return 0;
  }
}

function recordSkipped(dataDir: string, name: string, segment: string, records: number, now: number): void {
  mkdirSync(outputsDir(dataDir), { recursive: true, mode: 0o750 });
  const line = `${JSON.stringify({ at: new Date(now).toISOString(), segment, records })}\n`;
  appendFileDurably(skippedPath(dataDir, name), line, 0o640, null);
}

function countLines(path: string, from: number): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return 0;
  }
  try {
    const buf = Buffer.allocUnsafe(1024 * 1024);
    let count = 0;
    for (let position = from; ; ) {
      const n = readSync(fd, buf, 0, buf.length, position);
      if (n === 0) return count;
      for (let i = buf.indexOf(NEWLINE); i !== -1 && i < n; i = buf.indexOf(NEWLINE, i + 1)) count += 1;
      position += n;
    }
  } finally {
    closeSync(fd);
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
