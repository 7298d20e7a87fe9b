// The daemon's periodic chores: retention of record segments (at start and hourly) and the certificate
// expiry warning (at start and daily).
import type { Logger } from 'pino';
import { applyRetention, type RetentionBounds } from '../store/retention.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** A certificate this close to its end is warned about. */
export const EXPIRY_WARNING_DAYS = 14;

export interface Chore {
  run(): void;
  stop(): void;
}

function every(intervalMs: number, task: () => void): Chore {
  task();
  const timer = setInterval(task, intervalMs);
  timer.unref();
  return { run: task, stop: () => clearInterval(timer) };
}

export function startRetention(options: {
  dataDir: string;
  bounds: RetentionBounds;
  logger: Logger;
  now: () => number;
  intervalMs: number;
  current: () => string | null;
}): Chore {
  const { bounds, logger } = options;
  if (bounds.days === null && bounds.maxBytes === null) return { run() {}, stop() {} };
  let lastRunAt: number | null = null;
  return every(options.intervalMs, () => {
    try {
      const now = options.now();
      const result = applyRetention({
        dataDir: options.dataDir,
        ...bounds,
        now,
        current: options.current(),
        lastRunAt,
        intervalMs: options.intervalMs,
      });
      lastRunAt = now;
      if (result.ageSkipped) {
        logger.warn(
          { now: new Date(now).toISOString() },
          'the clock is far ahead of the newest records or jumped forward; age-based retention waits for the next run',
        );
      }
      for (const r of result.removed) {
        logger.info(
          { segment: r.file, bytes: r.bytes, reason: r.reason, retention: bounds },
          'removed a record segment past retention',
        );
      }
      if (result.removed.length > 0) {
        logger.info(
          {
            removedSegments: result.removed.length,
            removedBytes: result.removed.reduce((sum, r) => sum + r.bytes, 0),
            keptSegments: result.keptSegments,
            keptBytes: result.keptBytes,
          },
          'retention applied',
        );
      }
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'retention failed; will try again');
    }
  });
}

/** Days left until `notAfter` when that is within the warning window (negative when already expired). */
export function daysUntilExpiry(notAfter: Date, now: number): number | null {
  const left = (notAfter.getTime() - now) / DAY_MS;
  return left <= EXPIRY_WARNING_DAYS ? Math.floor(left * 10) / 10 : null;
}

export function startExpiryWarnings(options: {
  logger: Logger;
  now: () => number;
  intervalMs: number;
  certificate: () => { certPath: string; notAfter: Date; selfSigned: boolean };
}): Chore {
  return every(options.intervalMs, () => {
    const cert = options.certificate();
    const days = daysUntilExpiry(cert.notAfter, options.now());
    if (days === null) return;
    options.logger.warn(
      { certificate: cert.certPath, notAfter: cert.notAfter.toISOString(), daysLeft: days },
      days < 0
        ? 'the TLS certificate has expired: renew it (the daemon reloads it without restart)'
        : `the TLS certificate expires within ${EXPIRY_WARNING_DAYS} days: renew it (the daemon reloads it without restart)`,
    );
  });
}
