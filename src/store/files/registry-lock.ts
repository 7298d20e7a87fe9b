// The registry's inter-process lock: proper-lockfile's `sensors.json.lock` directory plus the holder's pid
// beside it, so that a lock left by a killed command is taken over at once (not after the 10 s stale time),
// and the temporary files such a command left behind are removed by the next holder.
import { readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** What writeFileAtomic names a temporary file: `<file>.tmp-<pid>-<random>`. */
const TMP_PID = /\.tmp-(\d+)-[a-z0-9]*$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, under another user (the service user's daemon, root's CLI).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process its parent has not reaped yet is a zombie: dead for the lock's purpose.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function readPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Removes a lock whose recorded holder is dead. The pid file is claimed by rename first, so of several
 * processes that found the same dead holder one removes the lock; a holder that took the lock meanwhile
 * (its own pid in the claimed file) gets its file back.
 */
function breakDeadLock(path: string): void {
  const pidFile = `${path}.lock.pid`;
  const pid = readPid(pidFile);
  if (pid === null || alive(pid)) return;
  const claimed = `${pidFile}.${process.pid}`;
  try {
    renameSync(pidFile, claimed);
  } catch {
    return; // another process claimed it first
  }
  const holder = readPid(claimed);
  if (holder !== null && alive(holder)) {
    renameSync(claimed, pidFile);
    return;
  }
  rmSync(`${path}.lock`, { recursive: true, force: true });
  rmSync(claimed, { force: true });
}

/** `<file>.tmp-*` of writers that died before their rename (only lock holders write the registry). */
function removeDeadTemporaries(path: string): void {
  const prefix = `${basename(path)}.tmp-`;
  for (const name of readdirSync(dirname(path))) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(TMP_PID.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && pid > 0 && !alive(pid)) {
      try {
        unlinkSync(join(dirname(path), name));
      } catch {}
    }
  }
}

/** Takes the lock of `path` (waiting for a live holder), returns its release. */
export async function lockRegistry(path: string): Promise<() => Promise<void>> {
  breakDeadLock(path);
  // Imported by changes only (with graceful-fs under it): listing sensors does not lock.
  const { default: lockfile } = await import('proper-lockfile');
  const release = await lockfile.lock(path, {
    realpath: false,
    // A holder that is alive but stopped (SIGSTOP, a debugger) still loses the lock after this long.
    stale: 10_000,
    retries: { retries: 100, minTimeout: 10, maxTimeout: 200, randomize: true },
  });
  const pidFile = `${path}.lock.pid`;
  try {
    writeFileSync(pidFile, `${process.pid}\n`);
    removeDeadTemporaries(path);
  } catch (error) {
    await release();
    throw error;
  }
  return async () => {
    rmSync(pidFile, { force: true });
    await release();
  };
}
