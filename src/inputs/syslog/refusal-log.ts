// Logs why syslog connections were refused or closed: once per address group and minute, and at most MAX_LINES
// lines per interval in all, so thousands of addresses each refused once write a bounded log.
import type { Logger } from 'pino';
import { addressGroup } from '../../address-group.js';

/** One address group (IPv6: its /64) is logged at most once per this interval. */
export const PER_ADDRESS_MS = 60_000;
/** Refusal lines per interval, whoever connects (as the HTTPS listener's rejections: journald's rate limit). */
export const MAX_LINES = 50;
/** Addresses remembered for the per-address limit: a scan must not grow it without bound. */
const MAX_TRACKED = 10_000;

export class RefusalLog {
  private readonly logged = new Map<string, number>();
  private windowStart = Number.NEGATIVE_INFINITY;
  private windowLines = 0;
  private suppressed = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly logger: Logger,
    /** The overall cap's interval (`log.rejectIntervalMs`). */
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {}

  /** Warns that `addr` was refused, unless its group warned within a minute or the overall cap is reached. */
  warn(addr: string, why: string, details: Record<string, unknown> = {}): void {
    const group = addressGroup(addr);
    const now = this.now();
    if (now - (this.logged.get(group) ?? Number.NEGATIVE_INFINITY) < PER_ADDRESS_MS) return;
    if (now - this.windowStart >= this.intervalMs) {
      this.flush();
      this.windowStart = now;
      this.windowLines = 0;
    }
    if (this.windowLines >= MAX_LINES) {
      this.suppressed += 1;
      // The count is written when the interval ends, even if nothing is refused after it.
      this.timer ??= setTimeout(() => this.flush(), this.windowStart + this.intervalMs - now).unref();
      return;
    }
    if (this.logged.size >= MAX_TRACKED) this.logged.clear();
    this.logged.set(group, now);
    this.windowLines += 1;
    this.logger.warn({ remoteAddr: addr, ...details }, why);
  }

  /** Writes the count of refusals the overall cap held back, if any. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.suppressed === 0) return;
    this.logger.warn(
      { suppressed: this.suppressed, maxLines: MAX_LINES, intervalMs: this.intervalMs },
      `${this.suppressed} more syslog connections refused, not logged (at most ${MAX_LINES} lines per ${this.intervalMs} ms); threatcol_syslog_connections_refused_total counts them`,
    );
    this.suppressed = 0;
  }
}
