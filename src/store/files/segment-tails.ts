// The segments an output feed is reading, kept open between its reads: a batch filling from the writer's tail
// reads the new bytes from the page cache with one read each time, without opening, sizing and closing the
// segment again at every look (most of what a feed cost the serving process per batch).
import { nodeFileOps } from '../file-ops.js';

const NEWLINE = 0x0a;

export interface SegmentTails {
  /**
   * About `chunkSize` bytes after `offset` (a line start) in the segment at `path`, ending with a complete line:
   * the bytes, the index of their last newline, and whether they reached the segment's end (then there was no
   * more to read); null when no line is complete there yet or the segment is gone (retention removed it).
   */
  chunkAt(
    path: string,
    offset: number,
    chunkSize: number,
  ): Promise<{ buf: Buffer; last: number; atEnd: boolean } | null>;
  /** The feed has moved past this segment: its descriptor goes. */
  release(path: string): Promise<void>;
  /** Releases the segments not in `paths` (retention removed them): their space is freed, not held open. */
  retain(paths: ReadonlySet<string>): Promise<void>;
  close(): Promise<void>;
}

export function openSegmentTails(): SegmentTails {
  const open = new Map<string, Promise<number | null>>();
  /**
   * Reads land here and only their complete lines are copied out: a feed caught up with the writer looks every
   * 50 ms and mostly finds a few lines, and a fresh buffer of the chunk's size at every look was memory the
   * garbage collector had to be told about and page faults the kernel had to serve, for nothing.
   */
  let scratch: Buffer | null = null;
  /** Whether the last read filled what it asked for: the feed is behind the writer. */
  let behind = false;
  const fdOf = (path: string) => {
    let fd = open.get(path);
    if (fd === undefined) {
      fd = nodeFileOps.open(path, 'r', 0).catch((error: NodeJS.ErrnoException) => {
        open.delete(path);
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      open.set(path, fd);
    }
    return fd;
  };
  const release = async (path: string) => {
    const fd = await open.get(path);
    open.delete(path);
    if (typeof fd === 'number') await nodeFileOps.close(fd);
  };
  return {
    async chunkAt(path, offset, chunkSize) {
      const fd = await fdOf(path);
      if (fd === null) return null;
      let want = chunkSize;
      for (;;) {
        // Behind the writer (the last read came back full), a read fills a buffer of its own, handed over as it
        // is: a backlog is read once, not read and then copied.
        const own = behind;
        if (!own && (scratch === null || scratch.length < want)) scratch = Buffer.allocUnsafeSlow(want);
        const into = own ? Buffer.allocUnsafe(want) : (scratch as Buffer);
        const bytesRead = await nodeFileOps.read(fd, into, 0, want, offset);
        behind = bytesRead === want;
        const last = into.subarray(0, bytesRead).lastIndexOf(NEWLINE);
        // A copy of what is handed over from the scratch: the lines' bytes live on in the batch while the scratch
        // is read into again.
        if (last !== -1) {
          const buf = own ? into.subarray(0, last + 1) : Buffer.from(into.subarray(0, last + 1));
          return { buf, last, atEnd: bytesRead < want };
        }
        // Only part of a line so far: wait for the rest, or read a bigger piece if the line is that long.
        if (bytesRead < want) return null;
        want *= 2;
      }
    },
    release,
    async retain(paths) {
      for (const path of [...open.keys()]) if (!paths.has(path)) await release(path);
    },
    async close() {
      for (const path of [...open.keys()]) await release(path);
    },
  };
}
