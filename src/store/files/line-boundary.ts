// Where a line starts, found by reading a file backwards: shared by the writer (cutting a torn tail) and the
// reader (never reading a line still being written, resuming at a line's start).

/** Reads up to `length` bytes at `position` into `buffer` (from its start); resolves with the bytes read. */
export type ReadAt = (buffer: Buffer, length: number, position: number) => Promise<number>;

const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

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
