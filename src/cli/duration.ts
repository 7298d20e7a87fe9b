// Parses the durations the CLI accepts (`24h`, `90m`, `30s`, `1h30m`, `500ms`, `7d`, `0`) into milliseconds.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Longer than any grace period or look-back anyone means; keeps the result a safe integer and a valid Date. */
export const MAX_DURATION_MS = 100 * 365 * 86_400_000;
const WHOLE = /^(?:\d{1,15}(?:ms|s|m|h|d))+$/;
const PART = /(\d{1,15})(ms|s|m|h|d)/g;

/** Milliseconds, or null when the text is not a duration. A bare number is accepted only for `0`. */
export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (/^0+$/.test(s)) return 0;
  if (!WHOLE.test(s)) return null;
  let total = 0;
  for (const [, amount, unit] of s.matchAll(PART)) {
    total += Number(amount) * (UNIT_MS[unit as string] as number);
    if (total > MAX_DURATION_MS) return null;
  }
  return total;
}

/** `90000` -> `1m30s` (config/format-duration.ts: the silence watcher's records spell durations the same way). */
export { formatDuration } from '../config/format-duration.js';
