// The processes a test starts (serve, the CLI, nats-server, rsyslogd, LazyFS) end with the test file, whatever
// happened: a test that fails or times out leaves none behind.
//
// Three layers, every spawn helper goes through `guard`:
// - the test's own teardown (t.after, which node:test runs also when the test times out) stops what it started;
// - the file's teardown: a root-level `after` hook ends every guarded child still alive when the file's tests are
//   done (a timed-out test's serve too: otherwise its pipes keep the file's process waiting for it forever);
// - the watchdog: guarded commands run under `setpriv --pdeathsig SIGKILL`, so the kernel kills them when the test
//   process dies (killed by a runner, a crash) and no hook can run. Node has no prctl(PR_SET_PDEATHSIG) of its own;
//   setpriv (util-linux) sets it and execs the command, which keeps its pid.
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { after } from 'node:test';

/** A child has ended once it has an exit code or, when a signal ended it, a signal code (exitCode stays null). */
export function gone(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves when the child has ended (at once if it has). */
export function ended(child: ChildProcess): Promise<void> {
  if (gone(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Signals a process group; a group that is gone (every member ended and reaped) is not an error. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Ends a child: `signal`, then SIGKILL if it is still there after `graceMs`. A child that is gone is left alone
 * (ChildProcess.kill on it would be a no-op anyway; a group kill would be ESRCH).
 */
export async function endChild(
  child: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number; group?: boolean } = {},
): Promise<void> {
  if (gone(child)) return;
  const send = (signal: NodeJS.Signals) => {
    if (options.group && child.pid !== undefined) killGroup(child.pid, signal);
    else child.kill(signal);
  };
  const exit = ended(child);
  send(options.signal ?? 'SIGKILL');
  // A stopped (SIGSTOP) process takes no SIGTERM until it is continued.
  if ((options.signal ?? 'SIGKILL') !== 'SIGKILL') send('SIGCONT');
  const timer = setTimeout(() => send('SIGKILL'), options.graceMs ?? 10_000);
  await exit;
  clearTimeout(timer);
}

const live = new Map<ChildProcess, { group: boolean }>();
const underTest = process.env.NODE_TEST_CONTEXT !== undefined || process.execArgv.includes('--test');
// Registered when this module is first imported: helpers are imported at the top of a test file, before any test
// runs, so this is the file's (root) `after` hook, run after its last test, a timed-out one included.
if (underTest) {
  after(async () => {
    await Promise.all([...live].map(([child, { group }]) => endChild(child, { signal: 'SIGTERM', group })));
  });
}
// The test process ending by itself (process.exit) with children still there: no await possible, SIGKILL them.
process.on('exit', () => {
  for (const [child, { group }] of live) {
    if (gone(child)) continue;
    try {
      if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {}
  }
});

const hasSetpriv = spawnSync('setpriv', ['--help'], { stdio: 'ignore' }).status === 0;

/** argv with the watchdog in front: the command is SIGKILLed when the test process dies. */
export function watched(argv: string[]): string[] {
  return hasSetpriv ? ['setpriv', '--pdeathsig', 'SIGKILL', '--', ...argv] : argv;
}

/** Tracks a spawned child until it ends: the file's teardown ends it if the test's own did not. */
export function guard<T extends ChildProcess>(child: T, options: { group?: boolean } = {}): T {
  if (child.pid === undefined) return child; // it did not start (its 'error' tells the caller)
  live.set(child, { group: options.group ?? false });
  child.once('exit', () => live.delete(child));
  return child;
}
