// A worker's syslog tally (counts, refusals, unreadable samples): kept in memory and handed to the primary,
// which sums every worker's into the one tally `sensor show --syslog-errors` and /metrics read.
import type { Config } from '../config/schema.js';
import { syslogConfigured } from '../inputs/syslog/syslog-listener.js';
import { SyslogTally, type SyslogTallyDelta } from '../inputs/syslog/syslog-tally.js';

export interface SyslogTallyReports {
  /** What the worker's syslog listener counts into. */
  tally: SyslogTally;
  /** Sends what is left and stops reporting. */
  stop(): void;
}

/** Null when syslog is not configured; otherwise reports every `intervalMs` (only when something was counted). */
export function reportSyslogTally(
  config: Config,
  intervalMs: number,
  send: (delta: SyslogTallyDelta) => void,
): SyslogTallyReports | null {
  if (!syslogConfigured(config)) return null;
  const tally = new SyslogTally();
  const flush = () => {
    const delta = tally.drain();
    if (delta) send(delta);
  };
  const timer = setInterval(flush, intervalMs);
  timer.unref();
  return {
    tally,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}
