// Times as syslog senders write them (RFC 3339, BSD `Mmm dd hh:mm:ss`, local wall times) made UTC ISO strings.
import { firewallTimeToUtcMs } from '../../records/firewall-time.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 time with its offset (RFC 5424 TIMESTAMP, Suricata, CEF `rt`) as UTC ISO, or undefined. */
export function rfc3339ToIso(text: string): string | undefined {
  // `YYYY-MM-DDThh:mm:ss.sssZ` (most senders, and send syslog) is its own UTC ISO text: checked by hand.
  if (isIsoUtc(text)) return text;
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  if (!isWallTime(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))) return undefined;
  const zone = (m[8] as string).toUpperCase() === 'Z' ? 'Z' : (m[8] as string);
  const fraction = (m[7] ?? '').slice(0, 4); // milliseconds are what Date keeps
  // UTC already (most senders): the ISO text is the input's, without Date's parse and print (a twelfth of a
  // message's cost). A leap second (:60) takes the slow path, which refuses it as Date does.
  if (zone === 'Z' && s !== '60')
    return `${y}-${mo}-${d}T${h}:${mi}:${s}.${fraction.slice(1).padEnd(3, '0')}Z`;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${fraction}${zone}`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** Digit positions of `YYYY-MM-DDThh:mm:ss.sssZ`. */
const ISO_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];

/** Whether `text` is a calendar time written exactly as toISOString writes one (leap seconds excluded). */
function isIsoUtc(text: string): boolean {
  if (text.length !== 24 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T') return false;
  if (text[13] !== ':' || text[16] !== ':' || text[19] !== '.' || text[23] !== 'Z') return false;
  for (const i of ISO_DIGITS) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  const n = (i: number) => (text.charCodeAt(i) - 48) * 10 + text.charCodeAt(i + 1) - 48;
  return n(17) < 60 && isWallTime(n(0) * 100 + n(2), n(5), n(8), n(11), n(14), n(17));
}

/** A wall time read in the IANA `zone` as UTC ISO, or undefined when it is no calendar time. */
export function localTimeToIso(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  zone: string,
): string | undefined {
  if (!isWallTime(year, month, day, hour, minute, second)) return undefined;
  const p = (n: number) => String(n).padStart(2, '0');
  const ms = firewallTimeToUtcMs(`${year}/${p(month)}/${p(day)} ${p(hour)}:${p(minute)}:${p(second)}`, zone);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

const WALL = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * A wall time written `YYYY/MM/DD hh:mm:ss` (PAN-OS) read in the IANA `zone`, as UTC ISO, or undefined when it
 * is no calendar time: the text as it is goes to the zone conversion, not rebuilt from its numbers.
 */
export function wallTextToIso(text: string, zone: string): string | undefined {
  // A firewall's records of one second share the time (a one-entry memo, as for detected_at over HTTPS).
  if (text === lastWall && zone === lastWallZone) return lastWallIso;
  lastWallIso = readWallText(text, zone);
  lastWall = text;
  lastWallZone = zone;
  return lastWallIso;
}

let lastWall = '';
let lastWallZone = '';
let lastWallIso: string | undefined;

function readWallText(text: string, zone: string): string | undefined {
  const m = WALL.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  if (!isWallTime(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))) return undefined;
  const ms = firewallTimeToUtcMs(text, zone);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

const BSD = /^([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * A BSD (RFC 3164) `Mmm dd hh:mm:ss`, which has no year and no zone: read in the sensor's `zone`, in whichever of
 * last year, this year and next year puts it nearest to `nowMs` (a December message read in January belongs
 * to last year; a sender's clock a little ahead across New Year to next year). Undefined when it is no time.
 */
export function bsdTimeToIso(text: string, zone: string, nowMs: number): string | undefined {
  const m = BSD.exec(text);
  if (m === null) return undefined;
  const month = MONTHS.indexOf(m[1] as string) + 1;
  if (month === 0) return undefined;
  const [day, hour, minute, second] = [m[2], m[3], m[4], m[5]].map((t) => Number((t as string).trim()));
  const year = new Date(nowMs).getUTCFullYear();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const y of [year - 1, year, year + 1]) {
    const iso = localTimeToIso(
      y,
      month,
      day as number,
      hour as number,
      minute as number,
      second as number,
      zone,
    );
    if (iso === undefined) continue; // Feb 29 outside a leap year
    const distance = Math.abs(Date.parse(iso) - nowMs);
    if (distance < bestDistance) {
      best = iso;
      bestDistance = distance;
    }
  }
  return best;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isWallTime(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (!(mo >= 1 && mo <= 12 && d >= 1 && h <= 23 && mi <= 59 && s <= 60)) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= (mo === 2 && !leap ? 28 : (DAYS[mo - 1] as number));
}
