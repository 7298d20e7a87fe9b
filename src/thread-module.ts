// A module of src/ run as a worker thread (the outputs' and the decisions engine's), and the thread's log lines
// written again by its owner's logger: one format, one destination, the same redaction.
import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { Logger } from 'pino';

/**
 * Starts `file` (a module beside `callerUrl`, named without its extension) as a thread. Run from the sources
 * (tests under tsx), the thread registers tsx itself first.
 */
export function startThreadModule(callerUrl: string, file: string, options: WorkerOptions): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${file}.js`, callerUrl), options);
  const entry = JSON.stringify(new URL(`./${file}.ts`, callerUrl).href);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${entry}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** A pino line of a thread, logged by `logger` at its level (a line that is not JSON: as it is, at info). */
export function relogLine(logger: Logger, line: string): void {
  try {
    const { level, msg, ...fields } = JSON.parse(line) as { level: number; msg?: string };
    const label = (logger.levels.labels[level] ?? 'info') as 'info';
    logger[label](fields, msg ?? '');
  } catch {
    logger.info(line.trim());
  }
}
