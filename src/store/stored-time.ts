// A stored time read off a line's bytes: what Date.parse gives for the text there, without making the text when
// it has the writer's form (toISOString's `YYYY-MM-DDTHH:MM:SS.sssZ`), which nearly every stored time has.

const ZERO = 0x30;
/** The form's separators by position (0: a digit there). */
const FORM = Buffer.from('0000-00-00T00:00:00.000Z'.replace(/0/g, '\u0000'), 'latin1');
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Date.parse of the latin1 text `buf[start, end)`, the same number or NaN. A time in the writer's form with
 * fields in their ranges is counted from its digits; any other text goes to Date.parse.
 */
export function isoTimeMs(buf: Uint8Array, start: number, end: number): number {
  if (end - start !== 24) return slowTime(buf, start, end);
  // Most times share their hour with the one read before (a batch's lines, each read by the check, then the
  // engine): its first 13 bytes (`YYYY-MM-DDTHH`), checked then, are compared and its count taken again.
  let i = 0;
  if (lastHourMs !== null) while (i < HOUR_BYTES && buf[start + i] === lastHour[i]) i++;
  if (i < HOUR_BYTES) {
    const hourMs = hourOf(buf, start);
    if (Number.isNaN(hourMs)) return slowTime(buf, start, end);
    lastHourMs = hourMs;
    for (let k = 0; k < HOUR_BYTES; k++) lastHour[k] = buf[start + k] as number;
  }
  for (let k = HOUR_BYTES; k < 24; k++) {
    const c = buf[start + k] as number;
    const f = FORM[k] as number;
    if (f === 0 ? c < ZERO || c > ZERO + 9 : c !== f) return slowTime(buf, start, end);
  }
  const minute = digits(buf, start + 14, 2);
  const second = digits(buf, start + 17, 2);
  if (minute > 59 || second > 59) return slowTime(buf, start, end);
  return (lastHourMs as number) + minute * 60_000 + second * 1000 + digits(buf, start + 20, 3);
}

/**
 * Whether a time's text is in the writer's form with its fields in their ranges (a day its month has, hours to
 * 23): such texts sort as the times Date.parse gives them, so they compare without parsing.
 */
export function inWriterForm(text: string): boolean {
  if (text.length !== 24) return false;
  for (let k = 0; k < 24; k++) {
    const c = text.charCodeAt(k);
    const f = FORM[k] as number;
    if (f === 0 ? c < ZERO || c > ZERO + 9 : c !== f) return false;
  }
  return (
    inRanges(
      textDigits(text, 0, 4),
      textDigits(text, 5, 2),
      textDigits(text, 8, 2),
      textDigits(text, 11, 2),
    ) &&
    textDigits(text, 14, 2) <= 59 &&
    textDigits(text, 17, 2) <= 59
  );
}

/** The number the `n` digits at `at` of a checked text spell. */
function textDigits(text: string, at: number, n: number): number {
  let v = 0;
  for (let i = 0; i < n; i++) v = v * 10 + (text.charCodeAt(at + i) - ZERO);
  return v;
}

/** Whether a date and hour are ones Date.parse reads as written (not rolled over into the next). */
function inRanges(year: number, month: number, day: number, hour: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  return month >= 1 && day >= 1 && day <= days && hour <= 23;
}

/** `YYYY-MM-DDTHH`: the part of a time its hour's count is made from. */
const HOUR_BYTES = 13;
/** The hour last counted, and its count (null: none yet). */
const lastHour = new Uint8Array(HOUR_BYTES);
let lastHourMs: number | null = null;

/** The epoch ms of the hour `YYYY-MM-DDTHH` at `start`, when in the writer's form and its ranges; else NaN. */
function hourOf(buf: Uint8Array, start: number): number {
  for (let i = 0; i < HOUR_BYTES; i++) {
    const c = buf[start + i] as number;
    const f = FORM[i] as number;
    if (f === 0 ? c < ZERO || c > ZERO + 9 : c !== f) return Number.NaN;
  }
  const year = digits(buf, start, 4);
  const month = digits(buf, start + 5, 2);
  const day = digits(buf, start + 8, 2);
  const hour = digits(buf, start + 11, 2);
  // Out of range (or 24:00, which Date.parse reads as the next day): its answer, whatever it is.
  if (!inRanges(year, month, day, hour)) return Number.NaN;
  return daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000;
}

/** The number the `n` digits at `at` spell (checked digits). */
function digits(buf: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let i = 0; i < n; i++) v = v * 10 + ((buf[at + i] as number) - ZERO);
  return v;
}

function slowTime(buf: Uint8Array, start: number, end: number): number {
  return Date.parse(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1', start, end));
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Two digits, zero first. */
const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()`, the same text, counted in JavaScript for the years 0-9999 (the engine writes two
 * per block it makes, and the runtime's own takes several times as long); any other time through Date.
 */
export function isoText(ms: number): string {
  if (!(ms >= 0 && ms < 253_402_300_800_000) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / 86_400_000);
  const rest = ms - days * 86_400_000;
  // H. Hinnant's civil_from_days.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const milli = rest % 1000;
  return `${year < 1000 ? `${year}`.padStart(4, '0') : year}-${pad2(month)}-${pad2(day)}T${pad2(Math.floor(rest / 3_600_000))}:${pad2(Math.floor(rest / 60_000) % 60)}:${pad2(Math.floor(rest / 1000) % 60)}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
