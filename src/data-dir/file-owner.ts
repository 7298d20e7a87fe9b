// Keeps files the CLI creates owned by the data directory's owner, and writes files atomically and durably.
import {
  chownSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open as openAsync, rename as renameAsync, unlink as unlinkAsync } from 'node:fs/promises';
import { dirname } from 'node:path';

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
    const buffer = Buffer.from(data, 'utf8');
    let written = 0;
    while (written < buffer.length) written += writeSync(fd, buffer, written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  adoptOwner(path, owner);
}

/**
 * writeFileAtomic without blocking the event loop: for files written often by the serving process (an
 * output's cursor at every batch), whose fsyncs would otherwise stall the requests being answered.
 */
export async function writeFileAtomicAsync(
  path: string,
  data: string,
  mode: number,
  owner: Owner | null,
): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const handle = await openAsync(tmp, 'wx', mode);
  try {
    await handle.chmod(mode);
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlinkAsync(tmp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    adoptOwner(tmp, owner);
    await renameAsync(tmp, path);
  } catch (error) {
    await unlinkAsync(tmp).catch(() => {});
    throw error;
  }
  const dir = await openAsync(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
