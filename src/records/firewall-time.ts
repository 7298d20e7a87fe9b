// Reads the firewall's zone-less `YYYY/MM/DD HH:MM:SS` time in a given IANA zone and converts it to UTC.

const SHAPE = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** Parses the firewall time shape; null unless it is a real calendar time. */
export function parseFirewallTime(text: string): WallTime | null {
  const m = SHAPE.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1970 || month < 1 || month > 12 || day < 1) return null;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const maxDay = month === 2 && leap ? 29 : (DAYS[month - 1] as number);
  if (day > maxDay || hour > 23 || minute > 59 || second > 59) return null;
  return { year, month, day, hour, minute, second };
}

export function isFirewallTime(text: string): boolean {
  return parseFirewallTime(text) !== null;
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

/** Offset of `zone` from UTC at the instant `utcMs`, in milliseconds (local = utc + offset). */
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

/**
 * The UTC instant of a wall-clock time in `zone`. A time that occurs twice (clocks set back) takes the
 * earlier instant; a time skipped by a forward change is moved forward by the gap, as ISO 8601/Temporal's
 * "compatible" disambiguation does.
 */
export function wallTimeToUtc(t: WallTime, zone: string): Date {
  const local = Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
  if (zone === 'UTC' || zone === 'Etc/UTC') return new Date(local);
  const before = offsetAt(local - 86_400_000, zone);
  const after = offsetAt(local + 86_400_000, zone);
  const candidates = [local - before, local - after].filter(
    (utc, i) => offsetAt(utc, zone) === (i === 0 ? before : after),
  );
  if (candidates.length > 0) return new Date(Math.min(...candidates));
  return new Date(local - before);
}
