// Reads the firewall's zone-less `YYYY/MM/DD HH:MM:SS` time in a given IANA zone and converts it to UTC.
import { firewallLocalMs, type WallTime } from '../schemas/firewall-time-format.js';

/** The UTC instant (ms) of a firewall time read in `zone` (see wallTimeToUtc); NaN when the text is not one. */
export function firewallTimeToUtcMs(text: string, zone: string): number {
  const local = firewallLocalMs(text);
  if (Number.isNaN(local)) return local;
  const minute = Math.floor(local / MINUTE) * MINUTE;
  if (zone !== memoZone || minute !== memoMinute) {
    memoZone = zone;
    memoMinute = minute;
    memoShift = minuteShift(minute, zone);
  }
  return Number.isNaN(memoShift) ? convert(local, zone, cachedOffsetAt) : local + memoShift;
}

const MINUTE = 60_000;
// One-entry memo by (zone, local minute): a sender's records of one minute share one conversion.
let memoZone = '';
let memoMinute = Number.NaN;
let memoShift = Number.NaN;

/**
 * UTC minus local time for every second of the local minute starting at `minute` (ms), or NaN when the minute
 * holds a change (a zone's offset never changes twice within an hour, so equal shifts at its first and last
 * second mean one shift for all of it).
 */
function minuteShift(minute: number, zone: string): number {
  const last = minute + MINUTE - 1000;
  const shift = convert(minute, zone, cachedOffsetAt) - minute;
  return convert(last, zone, cachedOffsetAt) - last === shift ? shift : Number.NaN;
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
