// Counts the lines and messages readers skip because they are not stored records, and says so at warn: the
// first at once, then at most one summary a minute (a stream full of foreign messages must not flood the log).
import type { Logger } from 'pino';

export interface SkippedRecords {
  /** One line or message that is not a stored record; `where` names it (segment and offset, stream sequence). */
  note(where: string): void;
  /** How many were skipped since the store was opened. */
  readonly count: number;
  /** Logs what was skipped since the last warning (a CLI command's last word before it exits). */
  flush(): void;
}

export function createSkippedRecords(
  logger: Logger,
  options: { intervalMs?: number; now?: () => number } = {},
): SkippedRecords {
  const intervalMs = options.intervalMs ?? 60_000;
  const now = options.now ?? Date.now;
  let count = 0;
  let pending = 0;
  let firstPending = '';
  let lastWarn = Number.NEGATIVE_INFINITY;

  function warn(): void {
    logger.warn(
      { skipped: pending, first: firstPending, total: count },
      'stored data that is not a threatcol record was skipped (another publisher, or a damaged line)',
    );
    pending = 0;
    lastWarn = now();
  }

  return {
    note(where) {
      count++;
      if (pending === 0) firstPending = where;
      pending++;
      if (now() - lastWarn >= intervalMs) warn();
    },
    get count() {
      return count;
    },
    flush() {
      if (pending > 0) warn();
    },
  };
}
