// Log lines a failure repeats, each written at most once per interval: the first at once, then one counting the rest.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';

type Level = 'warn' | 'error';

interface Line {
  /** When a line of it was last written. */
  at: number;
  /** Lines held back since. */
  unlogged: number;
  /** The fields and level of the last one held back: its count is written with them. */
  last: { level: Level; fields: Record<string, unknown> };
  timer: NodeJS.Timeout | null;
}

/**
 * Lines by message: the first at once, then none of it for `intervalMs`; when the interval ends, one line
 * `message (N more)` with the last one's fields and `suppressed: N`. A disk gone bad fails every batch, a store
 * that refuses fails every connection's retry every second: the log says so a few times, and how often.
 * Messages are the callers' constants, so the lines kept are a handful.
 */
export class LogThrottle {
  readonly #lines = new Map<string, Line>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  warn(fields: Record<string, unknown>, message: string): void {
    this.#write('warn', fields, message);
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.#write('error', fields, message);
  }

  /** Writes the counts held back now (at a stop), not when their interval ends. */
  flush(): void {
    for (const [message, line] of this.#lines) if (line.timer !== null) this.#summary(message, line);
  }

  #write(level: Level, fields: Record<string, unknown>, message: string): void {
    const now = this.now();
    let line = this.#lines.get(message);
    if (line === undefined) {
      line = { at: Number.NEGATIVE_INFINITY, unlogged: 0, last: { level, fields }, timer: null };
      this.#lines.set(message, line);
    }
    if (now - line.at >= this.intervalMs && line.timer === null) {
      line.at = now;
      this.logger[level](fields, message);
      return;
    }
    line.unlogged += 1;
    line.last = { level, fields };
    if (line.timer !== null) return;
    const held = line;
    held.timer = setTimeout(
      () => this.#summary(message, held),
      Math.max(0, this.intervalMs - (now - held.at)),
    );
    held.timer.unref();
  }

  #summary(message: string, line: Line): void {
    if (line.timer !== null) clearTimeout(line.timer);
    line.timer = null;
    line.at = this.now();
    const { level, fields } = line.last;
    this.logger[level]({ ...fields, suppressed: line.unlogged }, `${message} (${line.unlogged} more)`);
    line.unlogged = 0;
  }
}
