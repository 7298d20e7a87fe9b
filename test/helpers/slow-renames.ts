// `serve` under strace with every rename held for a while (an output's cursor is written by rename), so that a
// test can land an event inside that window: a kill -9, or another process's write of the same file.
import { readFileSync } from 'node:fs';
import type { ServeProcess } from './cli.js';
import { needs } from './needs.js';

export const straceMissing: string | false = needs('strace');

/** The wrapper command for spawnServe's `prefix`: each rename of the process waits `ms` first. */
export function slowRenames(ms: number): string[] {
  return [
    'strace',
    '-f',
    '-qq',
    '-o',
    '/dev/null',
    '-e',
    'trace=rename',
    '-e',
    `inject=rename:delay_enter=${ms * 1000}`,
  ];
}

/**
 * Kills the serve process under strace with SIGKILL (killing strace alone would leave it running, untraced);
 * call it at once after the spawn for `t.after`, whose kill must find the process when strace is gone.
 */
export function tracedKiller(serve: ServeProcess): () => void {
  const children = `/proc/${serve.child.pid}/task/${serve.child.pid}/children`;
  const pid = Number(readFileSync(children, 'utf8').trim().split(' ')[0]);
  return () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  };
}
