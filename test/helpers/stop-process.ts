// SIGSTOP that a test can build on: resolved once every thread of the process is stopped, not when kill() returns.
import { readdirSync, readFileSync } from 'node:fs';
import { until } from './until.js';

/**
 * Linux wakes one thread to take a group stop and that thread stops the others: until it has run, the rest of a
 * multi-threaded process (nats-server's goroutines) keep running, on a busy box for milliseconds. A request
 * sent in that time can still be answered.
 */
export function threadsNotStopped(pid: number): number {
  let running = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    // "tid (comm) S ...": the name may hold spaces and parentheses, the state follows the last ")".
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state !== 'T' && state !== 't') running++;
  }
  return running;
}

/** Sends SIGSTOP and resolves once no thread of the process runs any more. */
export async function stopProcess(pid: number, limitMs = 10_000): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  await until(() => threadsNotStopped(pid) === 0, limitMs, `process ${pid} stopped`, 1);
}
