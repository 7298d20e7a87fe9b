// The daemon's periodic chores: the certificate expiry warning (at start and daily). Retention of records
// belongs to the store (the files backend's writer runs it; NATS maps it to the stream's limits).
import type { Logger } from 'pino';

import { DAY_MS, daysUntilExpiry, EXPIRY_WARNING_DAYS } from '../tls/certificate.js';

export { DAY_MS, daysUntilExpiry, EXPIRY_WARNING_DAYS };
export const HOUR_MS = 3_600_000;

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
