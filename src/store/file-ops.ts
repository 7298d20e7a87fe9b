// The few file operations the record log needs, behind an interface so tests can inject faults (EIO, ENOSPC).
import * as fs from 'node:fs';
import { promisify } from 'node:util';

export interface FileOps {
  open(path: string, flags: string, mode: number): Promise<number>;
  /** One vectored write (writev) at the end of a file opened to append: the bytes written, maybe fewer than given. */
  writev(fd: number, buffers: readonly Buffer[]): Promise<number>;
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  fdatasync(fd: number): Promise<void>;
  fsync(fd: number): Promise<void>;
  ftruncate(fd: number, length: number): Promise<void>;
  fstatSize(fd: number): Promise<number>;
  close(fd: number): Promise<void>;
  /** Bytes free for unprivileged writers on the filesystem holding `path` (statfs). Optional for fault layers. */
  freeBytes?(path: string): Promise<number>;
}

const open = promisify(fs.open);
const writev = promisify(fs.writev);
const read = promisify(fs.read);
const fstat = promisify(fs.fstat);

export const nodeFileOps: FileOps = {
  open: (path, flags, mode) => open(path, flags, mode),
  writev: async (fd, buffers) => (await writev(fd, buffers as Buffer[])).bytesWritten,
  read: async (fd, buffer, offset, length, position) =>
    (await read(fd, buffer, offset, length, position)).bytesRead,
  fdatasync: promisify(fs.fdatasync),
  fsync: promisify(fs.fsync),
  ftruncate: (fd, length) => promisify(fs.ftruncate)(fd, length),
  fstatSize: async (fd) => (await fstat(fd)).size,
  close: promisify(fs.close),
  freeBytes: async (path) => {
    const s = await fs.promises.statfs(path);
    return s.bavail * s.bsize;
  },
};

/** What of `buffers` a write of `written` bytes left unwritten (views, no copies). */
export function unwritten(buffers: readonly Buffer[], written: number): Buffer[] {
  let i = 0;
  let left = written;
  while (i < buffers.length && left >= (buffers[i] as Buffer).length) left -= (buffers[i++] as Buffer).length;
  const rest = buffers.slice(i);
  if (left > 0 && rest.length > 0) rest[0] = (rest[0] as Buffer).subarray(left);
  return rest;
}
