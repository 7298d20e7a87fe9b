// A module of src/ run as a worker thread (the outputs' and the decisions engine's), and the thread's log lines
// written again by its owner's logger: one format, one destination, the same redaction.
import { getPriority, setPriority } from 'node:os';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { type Logger, pino } from 'pino';

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

/**
 * In the thread: its logger, each line sent by `send` to the owner (who logs it with relogLine), `thread`
 * telling its lines apart; and its CPU priority lowered by `nice` levels (Linux keeps one per thread), `what`
 * naming what then runs at the priority of ingest when the system refuses.
 */
export function threadSetUp(options: {
  level: string;
  thread: string;
  send: (line: string) => void;
  nice: number;
  what: string;
}): Logger {
  const logger = pino(
    { level: options.level, base: { thread: options.thread }, timestamp: false },
    { write: options.send },
  );
  try {
    setPriority(Math.min(19, getPriority() + options.nice));
  } catch (error) {
    logger.warn({ err: (error as Error).message }, `${options.what} at the priority of ingest`);
  }
  return logger;
}
