// Line boundaries in a segment: where a line starts, found by reading a file backwards (shared by the writer,
// cutting a torn tail, and the reader, never reading a line still being written), and where a hole begins.

/** Reads up to `length` bytes at `position` into `buffer` (from its start); resolves with the bytes read. */
export type ReadAt = (buffer: Buffer, length: number, position: number) => Promise<number>;

const CHUNK = 64 * 1024;
const FORWARD_CHUNK = 1024 * 1024;
const NEWLINE = 0x0a;
const NUL = 0x00;

/**
 * The offset just after the last newline before `end` (so `end` itself when the byte before it is a newline),
 * or 0 when there is none. Reads backwards in 64 KiB chunks: a torn tail costs one read, not the whole file.
 */
export async function lineStartBefore(readAt: ReadAt, end: number): Promise<number> {
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, end)));
  let stop = end;
  while (stop > 0) {
    const start = Math.max(0, stop - chunk.length);
    const n = await readAt(chunk, stop - start, start);
    const nl = chunk.subarray(0, n).lastIndexOf(NEWLINE);
    if (nl !== -1) return start + nl + 1;
    stop = start;
  }
  return 0;
}

/**
 * The offset of the first NUL byte before `end`, or `end` when there is none. A stored line never holds one
 * (JSON.stringify escapes U+0000, and UTF-8 uses the byte for nothing else), but a power cut in mid-write can
 * leave a hole of zeros where data written after the last fsync did not reach the disk while later data did
 * (pages written back out of order). Reads the whole range: the hole may begin anywhere after that fsync.
 */
export async function firstNulBefore(readAt: ReadAt, end: number): Promise<number> {
  const chunk = Buffer.allocUnsafe(Math.min(FORWARD_CHUNK, Math.max(1, end)));
  for (let start = 0; start < end; ) {
    const n = await readAt(chunk, Math.min(chunk.length, end - start), start);
    if (n === 0) break;
    const nul = chunk.subarray(0, n).indexOf(NUL);
    if (nul !== -1) return start + nul;
    start += n;
  }
  return end;
}
