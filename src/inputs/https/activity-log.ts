// Logs rejected requests at warn, at most once per sensor (or client address group) and code per interval and
// at most MAX_WARN_LINES in all per interval, and a periodic summary of the largest tallies at info.
import type { Logger } from 'pino';
import { addressGroup } from '../../address-group.js';
import type { ErrorCode } from '../../errors.js';
import { TLS_FAILURE_MESSAGES, type TlsFailureReason } from '../../tls/tls-failure.js';
import { topCounts } from './top-counts.js';

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
/**
 * Rejection warn lines per interval, whoever sends: thousands of addresses each refused once would otherwise
 * pass journald's rate limit, which then hides the collector's own errors too (issue 27 F6).
 */
export const MAX_WARN_LINES = 50;
/** Entries per tally in the summary line, the rest counted: the line stays a few KB (journald: 48 KB). */
export const SUMMARY_TOP = 20;

export class ActivityLog {
  private readonly lastWarned = new Map<string, { at: number; suppressed: number }>();
  private accepted = new Map<string, number>();
  private rejected = new Map<string, number>();
  /** `address reason` -> connections that failed before HTTP, for the summary. */
  private tlsFailures = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  /** The global cap's interval: when it began, lines written in it, lines held back. */
  private windowStart = Number.NEGATIVE_INFINITY;
  private windowLines = 0;
  private windowSuppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts accepted records for the summary; with `path`, logs the request at debug (DESIGN 9). */
  accept(sensor: string, records: number, path?: string, remoteAddr?: string): void {
    this.accepted.set(sensor, (this.accepted.get(sensor) ?? 0) + records);
    if (path !== undefined && this.logger.isLevelEnabled('debug')) {
      this.logger.debug({ status: 200, method: 'POST', path, sensor, remoteAddr, records }, 'accepted');
    }
  }

  /** A sender that hung up before its body was read whole: nobody to answer, logged at debug (DESIGN 9). */
  clientGone(method: string, path: string, sensor: string | null, remoteAddr: string): void {
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug(
        { method, path, sensor, remoteAddr },
        'the client hung up before its request was read',
      );
    }
  }

  /**
   * A 500: logged at error with the stack every time, never rate-limited (the limit is for ordinary
   * rejections a misconfigured sender repeats), and counted in the summary like any rejection.
   */
  internalError(r: Rejection, error: unknown): void {
    const who = r.sensor ?? `addr:${r.remoteAddr}`;
    const tally = `${who} ${r.code}`;
    this.rejected.set(tally, (this.rejected.get(tally) ?? 0) + 1);
    const err = error instanceof Error ? error : new Error(String(error));
    this.logger.error(
      {
        code: r.code,
        status: r.status,
        method: r.method,
        path: r.path,
        sensor: r.sensor,
        remoteAddr: r.remoteAddr,
        err,
      },
      `internal error: ${err.message}`,
    );
  }

  /**
   * The rate limit of warn lines: null while `key` warned less than an interval ago (counted as suppressed),
   * else how many were suppressed since its last line.
   */
  private mayWarn(key: string): number | null {
    const now = this.now();
    const last = this.lastWarned.get(key);
    if (last && now - last.at < this.intervalMs) {
      last.suppressed += 1;
      return null;
    }
    if (this.lastWarned.size >= MAX_TRACKED) this.lastWarned.clear();
    this.lastWarned.set(key, { at: now, suppressed: 0 });
    return last?.suppressed ?? 0;
  }

  /** The global cap: false (and counted) once MAX_WARN_LINES were written in this interval. */
  private withinCap(): boolean {
    const now = this.now();
    if (now - this.windowStart >= this.intervalMs) {
      this.reportSuppressed();
      this.windowStart = now;
      this.windowLines = 0;
    }
    if (this.windowLines >= MAX_WARN_LINES) {
      this.windowSuppressed += 1;
      return false;
    }
    this.windowLines += 1;
    return true;
  }

  /** The "N more" line for what the global cap held back (the summary counts each of them). */
  private reportSuppressed(): void {
    if (this.windowSuppressed === 0) return;
    this.logger.warn(
      { suppressed: this.windowSuppressed, maxLines: MAX_WARN_LINES, intervalMs: this.intervalMs },
      `${this.windowSuppressed} more rejected requests or failed connections not logged (at most ${MAX_WARN_LINES} lines per ${this.intervalMs} ms); the summary counts them`,
    );
    this.windowSuppressed = 0;
  }

  reject(r: Rejection): void {
    // Unauthenticated rejections are grouped by address group (an IPv6 sender by its /64, as the connection
    // caps count it): the claimed sensor name is not to be trusted, and one host has many IPv6 addresses.
    const who = r.sensor ?? `addr:${addressGroup(r.remoteAddr)}`;
    const tally = `${who} ${r.code}`;
    this.rejected.set(tally, (this.rejected.get(tally) ?? 0) + 1);
    const suppressed = this.mayWarn(tally);
    if (suppressed === null || !this.withinCap()) return;
    this.logger.warn(
      {
        code: r.code,
        status: r.status,
        method: r.method,
        path: r.path,
        sensor: r.sensor,
        remoteAddr: r.remoteAddr,
        suppressedSinceLast: suppressed,
      },
      `rejected: ${r.message}`,
    );
    if (this.rejected.size >= MAX_TRACKED) this.summarise();
  }

  /**
   * A connection that failed before HTTP (TLS or plain HTTP): warn with the client address and the reason,
   * at most once per address group and reason per interval, counted per address group in the summary.
   */
  tlsFailure(remoteAddr: string, reason: TlsFailureReason, errorCode: string): void {
    const tally = `${addressGroup(remoteAddr)} ${reason}`;
    this.tlsFailures.set(tally, (this.tlsFailures.get(tally) ?? 0) + 1);
    const suppressed = this.mayWarn(`tls ${tally}`);
    if (suppressed === null || !this.withinCap()) return;
    this.logger.warn(
      { reason, remoteAddr, errorCode, suppressedSinceLast: suppressed },
      `connection failed before HTTP: ${TLS_FAILURE_MESSAGES[reason]}`,
    );
    if (this.tlsFailures.size >= MAX_TRACKED) this.summarise();
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

  /**
   * One info line with accepted records by sensor and rejected requests by sensor (or address group) and code:
   * the SUMMARY_TOP largest of each, with how many entries and counts were left out; the totals count all.
   */
  summarise(): void {
    this.reportSuppressed();
    if (this.accepted.size === 0 && this.rejected.size === 0 && this.tlsFailures.size === 0) return;
    const accepted = topCounts(this.accepted, SUMMARY_TOP);
    const rejected = topCounts(this.rejected, SUMMARY_TOP);
    const failed = topCounts(this.tlsFailures, SUMMARY_TOP);
    const tlsFailures: Record<string, Record<string, number>> = {};
    for (const [tally, n] of Object.entries(failed.top)) {
      const space = tally.lastIndexOf(' ');
      const addr = tally.slice(0, space);
      tlsFailures[addr] = { ...tlsFailures[addr], [tally.slice(space + 1)]: n };
    }
    let total = 0;
    for (const n of this.accepted.values()) total += n;
    let totalRejected = 0;
    for (const n of this.rejected.values()) totalRejected += n;
    this.accepted = new Map();
    this.rejected = new Map();
    this.tlsFailures = new Map();
    const omitted = (o: { entries: number; count: number }) => (o.entries === 0 ? undefined : o);
    this.logger.info(
      {
        acceptedRecords: accepted.top,
        acceptedOmitted: omitted(accepted.omitted),
        rejectedRequests: rejected.top,
        rejectedOmitted: omitted(rejected.omitted),
        totalAccepted: total,
        totalRejected,
        failedConnections: tlsFailures,
        failedConnectionsOmitted: omitted(failed.omitted),
      },
      'summary',
    );
  }
}
