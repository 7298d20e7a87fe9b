// Record times as ISO 8601 text, each formatter remembering the last second it formatted: received_at repeats
// for the requests of one millisecond, detected_at for a firewall's records of one second, and a syslog
// sender's times (CEF `rt`) share their second. And the one reading of a time someone asks about (a window's
// start or end, on the command line or the admin API): UTC unless it names its zone, as the records are.

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;
const ZONE = /(?:Z|[+-]\d{2}:?\d{2})$/;

/**
 * An ISO 8601 time asked about (`2026-11-21`, `2026-11-21T10:00`, `2026-11-21 10:00:00.5+01:00`) in ms, or null
 * when the text is none. Without a zone it is UTC: Date.parse alone would read a date and time without one in
 * the local time of whichever process reads it (a daemon's zone is not the admin's).
 */
export function parseIsoTime(text: string): number | null {
  const iso = text.trim().toUpperCase().replace(' ', 'T');
  if (!ISO_TIME.test(iso)) return null;
  const at = Date.parse(ZONE.test(iso) || !iso.includes('T') ? iso : `${iso}Z`);
  return Number.isNaN(at) ? null : at;
}

/** Years 0-9999: toISOString's fixed-width shape, whose first 20 characters are the second's. */
const LAST_FIXED_MS = 253_402_300_800_000;

/**
 * A `new Date(ms).toISOString()` with a one-entry memo of its own (one per kind of time, so they never evict each
 * other): the same instant is the same string, and another millisecond of the same second only appends its
 * milliseconds to the second's text, without a Date.
 */
export function memoIsoTime(): (ms: number) => string {
  let lastMs = Number.NaN;
  let last = '';
  let second = Number.NaN;
  let secondText = '';
  return (ms) => {
    if (ms === lastMs) return last;
    lastMs = ms;
    const s = Math.floor(ms / 1000);
    if (s === second && Number.isInteger(ms)) {
      const milli = ms - s * 1000;
      last = `${secondText}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
    } else {
      last = new Date(ms).toISOString();
      const fixed = ms >= 0 && ms < LAST_FIXED_MS;
      second = fixed ? s : Number.NaN;
      secondText = fixed ? last.slice(0, 20) : '';
    }
    return last;
  };
}
