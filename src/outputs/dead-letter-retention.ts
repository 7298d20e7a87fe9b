// The store's retention period applied to dead letters, on either backend (they are files of the box that
// forwarded): every output's, removed outputs' too, checked where the outputs run, at start and hourly.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  claimHeld,
  dropFile,
  listDeadLetterFiles,
  outputsDir,
  rotateDeadLetters,
} from './dead-letter-files.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface PrunedDeadLetters {
  output: string;
  file: string;
  records: number;
  bytes: number;
}

/**
 * Deletes the dead-letter parts last written `days` or more ago. A file still appended to that old is only
 * rotated aside (an append may be opening it this instant) and goes at the next run; a part a live `--retry`
 * is sending stays.
 */
export function pruneDeadLetters(dataDir: string, days: number, now: number): PrunedDeadLetters[] {
  const cutoff = now - days * DAY_MS;
  const removed: PrunedDeadLetters[] = [];
  for (const file of listDeadLetterFiles(dataDir, null)) {
    let mtime: number;
    try {
      mtime = statSync(file.path).mtimeMs;
    } catch {
      continue;
    }
    if (mtime > cutoff) continue;
    if (file.seq === Infinity) {
      rotateDeadLetters(dataDir, file.output);
      continue;
    }
    if (claimHeld(file.claimedBy)) continue;
    const gone = dropFile(file);
    if (gone) removed.push({ output: file.output, file: file.file, ...gone });
  }
  return removed;
}

/**
 * Prunes now and hourly while `days` is set (store.retention.days); logs what went. As for record segments, a
 * clock that looks wrong (at the first run more than a day past the newest file of the outputs' directory,
 * which holds the cursors written at every batch; later, more than a day beyond the interval since the last
 * run) skips that run with a warning rather than aging out every dead letter at once.
 */
export function startDeadLetterRetention(options: {
  dataDir: string;
  days: number | null;
  logger: Logger;
  now: () => number;
  intervalMs?: number;
}): { stop(): void } {
  const { days, logger } = options;
  if (days === null) return { stop() {} };
  const intervalMs = options.intervalMs ?? HOUR_MS;
  let lastRunAt: number | null = null;
  const run = () => {
    const now = options.now();
    try {
      // No file in the outputs' directory yet (a new collector): nothing to prune, and nothing to judge the clock by.
      const newest = lastRunAt === null ? newestChange(options.dataDir) : null;
      const suspect =
        lastRunAt === null
          ? newest !== Number.NEGATIVE_INFINITY && now > (newest as number) + DAY_MS
          : now - lastRunAt > intervalMs + DAY_MS;
      lastRunAt = now;
      if (suspect) {
        logger.warn(
          { now: new Date(now).toISOString() },
          "the clock is far ahead of the outputs' files or jumped forward; dead-letter retention waits for the next run",
        );
        return;
      }
      for (const r of pruneDeadLetters(options.dataDir, days, now)) {
        logger.info({ ...r, days }, 'removed dead letters past store.retention.days');
      }
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'dead-letter retention failed; will try again');
    }
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** When a file of the outputs' directory last changed (-Infinity: none). */
function newestChange(dataDir: string): number {
  let newest = Number.NEGATIVE_INFINITY;
  let files: string[];
  try {
    files = readdirSync(outputsDir(dataDir));
  } catch {
    return newest;
  }
  for (const file of files) {
    try {
      newest = Math.max(newest, statSync(join(outputsDir(dataDir), file)).mtimeMs);
    } catch {}
  }
  return newest;
}
