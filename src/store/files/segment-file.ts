// One segment open for reading through FileOps (tests count and hold its reads): where its complete lines end,
// and its lines read backwards, newest first, within a byte budget.
import type { FileOps } from '../file-ops.js';
import { lineReceivedAt } from '../record-head.js';
import { lineStartBefore, type ReadAt } from './line-boundary.js';

const BACKWARD_CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/** An open segment, read through FileOps (tests count and hold reads). */
export interface SegmentFile {
  read: ReadAt;
  size(): Promise<number>;
  close(): Promise<void>;
}

/** Byte offset just after the last newline: a torn last line (being written, or left by a crash) is not read. */
export async function completeEnd(handle: SegmentFile): Promise<number> {
  return lineStartBefore(handle.read, await handle.size());
}

/**
 * Calls `visit` on each line before `end` with its length in bytes, newest first, until it returns true (then
 * returns true) or `exhausted` says the caller has read enough (then returns false): it is told the bytes read
 * but not yet visited too, so a region without a newline (a torn or hostile segment) cannot grow without bound.
 */
export async function scanBackward(
  handle: SegmentFile,
  end: number,
  signal: AbortSignal | undefined,
  visit: (line: string, bytes: number) => boolean,
  exhausted: (unvisited: number) => boolean = () => false,
): Promise<boolean> {
  const chunk = Buffer.allocUnsafe(BACKWARD_CHUNK);
  let position = end;
  let carry: Buffer = Buffer.alloc(0);
  while (position > 0) {
    signal?.throwIfAborted();
    if (exhausted(carry.length)) return false;
    const start = Math.max(0, position - chunk.length);
    const bytesRead = await handle.read(chunk, position - start, start);
    position = start;
    let buf = Buffer.concat([chunk.subarray(0, bytesRead), carry]);
    // The last byte is a newline (or the carry ends before one): cut lines off the end one by one.
    let stop = buf.length;
    if (buf[stop - 1] === NEWLINE) stop -= 1;
    let nl = buf.lastIndexOf(NEWLINE, stop - 1);
    while (nl !== -1) {
      if (stop > nl + 1 && visit(buf.toString('utf8', nl + 1, stop), stop - nl)) return true;
      if (exhausted(0)) return false;
      stop = nl;
      nl = stop > 0 ? buf.lastIndexOf(NEWLINE, stop - 1) : -1;
    }
    buf = buf.subarray(0, stop);
    carry = Buffer.from(buf);
  }
  return carry.length > 0 && visit(carry.toString('utf8'), carry.length + 1);
}

/**
 * When the segment's first record was received (epoch ms), read off its first bytes (a record's line starts
 * with its id and received_at); NaN when they are not a record's (a damaged or empty segment).
 */
export async function firstReceivedAt(handle: SegmentFile): Promise<number> {
  const head = Buffer.alloc(256);
  const bytesRead = await handle.read(head, head.length, 0);
  return lineReceivedAt(head.toString('utf8', 0, bytesRead));
}

/** `offset` if a line starts there (the byte before it is a newline), else the start of the line holding it. */
export function lineStartAtOrBefore(handle: SegmentFile, offset: number): Promise<number> {
  return lineStartBefore(handle.read, offset);
}

/** The segment at `path` opened to read, or null when it is gone (retention removed it meanwhile). */
export async function openSegmentFile(ops: FileOps, path: string): Promise<SegmentFile | null> {
  let fd: number;
  try {
    fd = await ops.open(path, 'r', 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return {
    read: (buffer, length, position) => ops.read(fd, buffer, 0, length, position),
    size: () => ops.fstatSize(fd),
    close: () => ops.close(fd),
  };
}
