// Shared tools of the reliability suite: soak switch, process probes (/proc), a serve spawner that can wrap the binary.
import { readdirSync, readFileSync } from 'node:fs';
import { type ServeProcess, spawnServe } from '../helpers/cli.js';

/** `npm run soak` sets SOAK=1 (not a THREATCOL_* name: the config loader rejects unknown ones). */
export const SOAK = process.env.SOAK === '1';

/** The bounded value in `npm test`, the long one in `npm run soak`. */
export function soak<T>(bounded: T, long: T): T {
  return SOAK ? long : bounded;
}

/** Resident set size of a process, in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** Open file descriptors of a process (sockets included). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** helpers/cli.ts spawnServe with a wrapper command in front of node (e.g. strace); resolves once it listens. */
export function spawnServeWrapped(
  dataDir: string,
  options: { prefix?: string[]; args?: string[]; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ServeProcess> {
  return spawnServe(dataDir, options.args ?? [], {
    ...(options.prefix ? { prefix: options.prefix } : {}),
    ...(options.env ? { env: options.env } : {}),
    timeoutMs: options.timeoutMs ?? 30_000,
  });
}

/** Stops a serve process at the end of a test whatever happened (SIGKILL if SIGTERM is not enough in 10 s). */
export function stopAfter(t: { after(fn: () => unknown): void }, serve: ServeProcess): void {
  t.after(async () => {
    const timer = setTimeout(() => serve.child.kill('SIGKILL'), 10_000);
    await serve.stop();
    clearTimeout(timer);
  });
}
