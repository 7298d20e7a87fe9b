// Reads the complete lines of a segment forward from a line start, each with the offset just after it: shared
// by the follower (`threats tail`, the dashboard) and the output feeds, which need a position per record.
import type { StoredRecord } from '../../records/stored-record.js';
import { nodeFileOps } from '../file-ops.js';
import { type ParseStored, parseStoredRecord } from '../record-shape.js';
import { openSegmentFile, type SegmentFile } from './segment-file.js';

const NEWLINE = 0x0a;

export interface SegmentLine {
  line: string;
  /** null for a line that is not a stored record (skipped by readers, passed by positions). */
  record: StoredRecord | null;
  /** Byte offset just after this line's newline: where reading resumes after it. */
  end: number;
}

/**
 * The complete lines from `offset` (a line start) up to `size`, reading about `chunkSize` bytes (more when a
 * single line is longer). A line still being written (no newline yet) is not returned.
 */
export async function readLinesAt(
  handle: SegmentFile,
  offset: number,
  size: number,
  chunkSize: number,
  parse: ParseStored = parseStoredRecord,
  where = '',
): Promise<SegmentLine[]> {
  let want = chunkSize;
  while (offset < size) {
    const length = Math.min(want, size - offset);
    const buf = Buffer.allocUnsafe(length);
    const bytesRead = await handle.read(buf, length, offset);
    const last = buf.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (last === -1) {
      // Only part of a line so far: wait for the rest, or read a bigger piece if the line is that long.
      if (bytesRead < size - offset) {
        want *= 2;
        continue;
      }
      return [];
    }
    const lines: SegmentLine[] = [];
    let start = 0;
    while (start <= last) {
      const nl = buf.indexOf(NEWLINE, start);
      if (nl > start) {
        const line = buf.toString('utf8', start, nl);
        lines.push({ line, record: parse(line, `${where}:${offset + start}`), end: offset + nl + 1 });
      } else if (lines.length > 0) {
        (lines[lines.length - 1] as SegmentLine).end = offset + nl + 1;
      } else {
        lines.push({ line: '', record: null, end: offset + nl + 1 });
      }
      start = nl + 1;
    }
    return lines;
  }
  return [];
}

/** Opens a segment for reading; null when it is gone (retention removed it meanwhile). */
export function openSegment(path: string): Promise<SegmentFile | null> {
  return openSegmentFile(nodeFileOps, path);
}
