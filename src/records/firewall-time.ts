// Reads the firewall's zone-less `YYYY/MM/DD HH:MM:SS` time in a given IANA zone and converts it to UTC.

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

/** The UTC instant (ms) of a firewall time read in `zone` (see wallTimeToUtc); NaN when the text is not one. */
export function firewallTimeToUtcMs(text: string, zone: string): number {
  const local = firewallLocalMs(text);
  return Number.isNaN(local) ? local : convert(local, zone, cachedOffsetAt);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Offset of `zone` from UTC at the instant `utcMs`, in milliseconds (local = utc + offset), from ICU. */
function offsetAt(utcMs: number, zone: string): number {
  const parts = formatterFor(zone).formatToParts(new Date(utcMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const local = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return local - Math.floor(utcMs / 1000) * 1000;
}

const HOUR = 3_600_000;
/** Hours remembered per zone; a collector sees a few hours of real time, so this bound is rarely reached. */
const MAX_WINDOWS = 4096;

/**
 * A zone's offsets by UTC hour. tz rules never change a zone's offset twice within one hour, so equal
 * offsets at an hour's first and last second mean one offset for the whole hour; otherwise the hour holds
 * one transition, found to the second by bisection, and the window keeps the offsets on both sides of it.
 */
interface Window {
  /** First second (UTC ms) with the `after` offset; +Infinity when the hour has a single offset. */
  change: number;
  before: number;
  after: number;
}

const windows = new Map<string, Map<number, Window>>();

function windowFor(hour: number, zone: string): Window {
  let zoneWindows = windows.get(zone);
  if (zoneWindows === undefined) {
    zoneWindows = new Map();
    windows.set(zone, zoneWindows);
  }
  let w = zoneWindows.get(hour);
  if (w !== undefined) return w;
  const first = hour * HOUR;
  const last = first + HOUR - 1000;
  const before = offsetAt(first, zone);
  const after = offsetAt(last, zone);
  if (before === after) w = { change: Number.POSITIVE_INFINITY, before, after };
  else {
    // Invariant: offsetAt(lo) === before, offsetAt(hi) === after; whole seconds.
    let lo = first;
    let hi = last;
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (offsetAt(mid, zone) === before) lo = mid;
      else hi = mid;
    }
    w = { change: hi, before, after };
  }
  if (zoneWindows.size >= MAX_WINDOWS) zoneWindows.clear();
  zoneWindows.set(hour, w);
  return w;
}

/** offsetAt, from the zone's hour windows: ICU is asked twice per zone and hour, not four times per record. */
function cachedOffsetAt(utcMs: number, zone: string): number {
  const w = windowFor(Math.floor(utcMs / HOUR), zone);
  return Math.floor(utcMs / 1000) * 1000 < w.change ? w.before : w.after;
}

/**
 * The UTC instant of a wall-clock time in `zone`. A time that occurs twice (clocks set back) takes the
 * earlier instant; a time skipped by a forward change is moved forward by the gap, as ISO 8601/Temporal's
 * "compatible" disambiguation does.
 */
export function wallTimeToUtc(t: WallTime, zone: string): Date {
  return new Date(convert(localMsOf(t), zone, cachedOffsetAt));
}

/** wallTimeToUtc asking ICU for every offset: the reference the cached conversion is tested against. */
export function wallTimeToUtcUncached(t: WallTime, zone: string): Date {
  return new Date(convert(localMsOf(t), zone, offsetAt));
}

const localMsOf = (t: WallTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

function convert(local: number, zone: string, offset: (utcMs: number, zone: string) => number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return local;
  const before = offset(local - 86_400_000, zone);
  const after = offset(local + 86_400_000, zone);
  // Same offset a day either side: no transition near, the common case.
  if (before === after && offset(local - before, zone) === before) return local - before;
  let best = Number.POSITIVE_INFINITY;
  if (offset(local - before, zone) === before) best = local - before;
  if (offset(local - after, zone) === after) best = Math.min(best, local - after);
  return best === Number.POSITIVE_INFINITY ? local - before : best;
}
