// The firewall's zone-less `YYYY/MM/DD HH:MM:SS` time shape: read without allocating, once for the schema's
// format check and once (memoised) for the record builder, which converts it to UTC in the sensor's zone.

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** Two ASCII digits at `i` as a number, or -1. */
function two(text: string, i: number): number {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * The wall time as milliseconds of a UTC-like timeline (Date.UTC of its fields), NaN unless the text is a
 * real calendar time in the firewall shape. By hand, not by regex, and without allocating: the schema's
 * format check and the record builder both read it.
 */
export function firewallLocalMs(text: string): number {
  if (text === lastText) return lastLocal;
  const local = readLocalMs(text);
  lastText = text;
  lastLocal = local;
  return local;
}

// One-entry memo: the builder reads the very string the format check has just read (single-record bodies).
let lastText = '';
let lastLocal = Number.NaN;

function readLocalMs(text: string): number {
  if (text.length !== 19) return Number.NaN;
  if (text.charCodeAt(4) !== 0x2f || text.charCodeAt(7) !== 0x2f || text.charCodeAt(10) !== 0x20)
    return Number.NaN;
  if (text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return Number.NaN;
  const hi = two(text, 0);
  const lo = two(text, 2);
  const month = two(text, 5);
  const day = two(text, 8);
  const hour = two(text, 11);
  const minute = two(text, 14);
  const second = two(text, 17);
  if (hi < 0 || lo < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return Number.NaN;
  const year = hi * 100 + lo;
  if (year < 1970 || month < 1 || month > 12 || day < 1) return Number.NaN;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const maxDay = month === 2 && leap ? 29 : (DAYS[month - 1] as number);
  if (day > maxDay || hour > 23 || minute > 59 || second > 59) return Number.NaN;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/** Parses the firewall time shape; null unless it is a real calendar time. */
export function parseFirewallTime(text: string): WallTime | null {
  const local = firewallLocalMs(text);
  if (Number.isNaN(local)) return null;
  const d = new Date(local);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

export function isFirewallTime(text: string): boolean {
  return !Number.isNaN(firewallLocalMs(text));
}
