// Keeps files the CLI creates owned by the data directory's owner, and writes files atomically and durably.
import {
  chownSync,
  closeSync,
  fchmodSync,
  fsync,
  fsyncSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { unlink as unlinkAsync } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const fsyncAsync = promisify(fsync);

export interface Owner {
  uid: number;
  gid: number;
}

export function ownerOf(path: string): Owner {
  const st = statSync(path);
  return { uid: st.uid, gid: st.gid };
}

/** As root, hand a new file to the data directory's owner, so the service user is never locked out. */
export function adoptOwner(path: string, owner: Owner | null): void {
  if (!owner || process.getuid?.() !== 0) return;
  const st = statSync(path);
  if (st.uid !== owner.uid || st.gid !== owner.gid) chownSync(path, owner.uid, owner.gid);
}

/** Write to a temporary file, fsync, chown, rename over the target, fsync the directory. */
export function writeFileAtomic(path: string, data: string, mode: number, owner: Owner | null): void {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    // The mode asked for, not the mode the umask leaves (root's 077 would make units and stats 0600).
    fchmodSync(fd, mode);
    const buffer = Buffer.from(data, 'utf8');
    let written = 0;
    while (written < buffer.length) written += writeSync(fd, buffer, written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(tmp);
    throw error;
  }
  closeSync(fd);
  try {
    adoptOwner(tmp, owner);
    renameSync(tmp, path);
  } catch (error) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw error;
  }
  syncDir(dirname(path));
}

export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Appends to a file (created with `mode`) and fsyncs it: the lines are on disk when this returns. */
export function appendFileDurably(path: string, data: string, mode: number, owner: Owner | null): void {
  const fd = openSync(path, 'a', mode);
  try {
    writeAllDurably(fd, data);
  } finally {
    closeSync(fd);
  }
  adoptOwner(path, owner);
}

/**
 * Writes all of `data` to an open file (at `position`, or where the file's offset is) and fsyncs it: on disk when
 * this returns. The one place a file's own fsync is made synchronously.
 */
export function writeAllDurably(fd: number, data: string, position?: number): void {
  const buffer = Buffer.from(data, 'utf8');
  let written = 0;
  while (written < buffer.length) {
    written +=
      position === undefined
        ? writeSync(fd, buffer, written)
        : writeSync(fd, buffer, written, buffer.length - written, position + written);
  }
  fsyncSync(fd);
}

/**
 * writeFileAtomic without waiting for the disk on the event loop: for files written often by the serving process
 * (an output's cursor at every batch), whose fsyncs would otherwise stall the requests being answered. Only the
 * two fsyncs go to the thread pool; opening, writing a few hundred bytes to the page cache, closing and renaming
 * stay here, as each trip through the pool costs the process two thread switches (seven more per batch, on a
 * collector pinned to one core, were most of what writing a cursor cost).
 */
export async function writeFileAtomicAsync(
  path: string,
  data: string,
  mode: number,
  owner: Owner | null,
): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    fchmodSync(fd, mode);
    const buffer = Buffer.from(data, 'utf8');
    let written = 0;
    while (written < buffer.length) written += writeSync(fd, buffer, written);
    await fsyncAsync(fd);
  } catch (error) {
    closeSync(fd);
    await unlinkAsync(tmp).catch(() => {});
    throw error;
  }
  closeSync(fd);
  try {
    adoptOwner(tmp, owner);
    renameSync(tmp, path);
  } catch (error) {
    await unlinkAsync(tmp).catch(() => {});
    throw error;
  }
  const dir = openSync(dirname(path), 'r');
  try {
    await fsyncAsync(dir);
  } finally {
    closeSync(dir);
  }
}
