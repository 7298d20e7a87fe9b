// Logs rejected requests at warn, at most once per sensor and code per interval, and a periodic summary at info.
import type { Logger } from 'pino';
import type { ErrorCode } from '../errors.js';

export interface Rejection {
  code: ErrorCode;
  status: number;
  method: string;
  path: string;
  sensor: string | null;
  remoteAddr: string;
  message: string;
}

const MAX_TRACKED = 10_000;

export class ActivityLog {
  private readonly lastWarned = new Map<string, { at: number; suppressed: number }>();
  private accepted = new Map<string, number>();
  private rejected = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  accept(sensor: string, records: number): void {
    this.accepted.set(sensor, (this.accepted.get(sensor) ?? 0) + records);
  }

  reject(r: Rejection): void {
    // Unauthenticated rejections are grouped by address: the claimed sensor name is not to be trusted.
    const who = r.sensor ?? `addr:${r.remoteAddr}`;
    const tally = `${who} ${r.code}`;
    this.rejected.set(tally, (this.rejected.get(tally) ?? 0) + 1);
    const now = this.now();
    const last = this.lastWarned.get(tally);
    if (last && now - last.at < this.intervalMs) {
      last.suppressed += 1;
      return;
    }
    if (this.lastWarned.size >= MAX_TRACKED) this.lastWarned.clear();
    this.lastWarned.set(tally, { at: now, suppressed: 0 });
    this.logger.warn(
      {
        code: r.code,
        status: r.status,
        method: r.method,
        path: r.path,
        sensor: r.sensor,
        remoteAddr: r.remoteAddr,
        suppressedSinceLast: last?.suppressed ?? 0,
      },
      `rejected: ${r.message}`,
    );
    if (this.rejected.size >= MAX_TRACKED) this.summarise();
  }

  start(summaryIntervalMs: number): void {
    this.timer = setInterval(() => this.summarise(), summaryIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.summarise();
  }

  /** One info line with accepted records by sensor and rejected requests by sensor (or address) and code. */
  summarise(): void {
    if (this.accepted.size === 0 && this.rejected.size === 0) return;
    const accepted = Object.fromEntries(this.accepted);
    const rejected = Object.fromEntries(this.rejected);
    let total = 0;
    for (const n of this.accepted.values()) total += n;
    let totalRejected = 0;
    for (const n of this.rejected.values()) totalRejected += n;
    this.accepted = new Map();
    this.rejected = new Map();
    this.logger.info(
      { acceptedRecords: accepted, rejectedRequests: rejected, totalAccepted: total, totalRejected },
      'summary',
    );
  }
}
