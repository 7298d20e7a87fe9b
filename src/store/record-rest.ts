// The rest of a stored line in the writer's own form (records/stored-line.ts), checked off its bytes after its head
// (record-head.ts): every field the shape check types (record-shape.ts), in the writer's order, then the line's
// end. An output's feed checks every line whole; this answers for the writer's lines without parsing them.
// Sound, not complete: true only where parseStoredRecord would give a record with the head's values; false sends
// the line to that parse (another field order, an unknown field, nesting deeper than the limit).
import { startsWith } from './record-head.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const BRACKET_OPEN = 0x5b;
const BRACKET_CLOSE = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const key = (name: string) => Buffer.from(`,"${name}":`);
const SEVERITY = key('severity');
const CRITICALITY_SOURCE = key('criticality_source');
const SRC_IP = key('src_ip');
const DST_IP = key('dst_ip');
const SRC_PORT = key('src_port');
const DST_PORT = key('dst_port');
const PROTOCOL = key('protocol');
const THREAT = key('threat');
const THREAT_ID = key('threat_id');
const DETECTED_AT = key('detected_at');
const ENRICHMENT = ['src', 'dst'].map((side) => ({
  country: key(`${side}_country`),
  asn: key(`${side}_asn`),
  org: key(`${side}_as_org`),
}));
const REMOTE_ADDR = key('remote_addr');
const ORIGINAL = key('original');
const REPAIRED = Buffer.from(',"repaired":true');
const TRUNCATED = Buffer.from(',"truncated":true');
const OTHER = Buffer.from(',"other":true');
const DEDUPE_KEY = key('dedupe_key');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

/** Deeper `original` values are left to JSON.parse (the stack of this scan stays small). */
const MAX_DEPTH = 32;

/** Bytes a JSON string escape may name after its backslash (`u` is followed by four hex digits). */
const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESCAPES[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/**
 * Where the addresses' values lie in the line `isWholeRest` last answered true for (absolute indexes into its
 * buffer, inside the quotes: a start and an end each): src_ip, then dst_ip. Filled in place.
 */
export const REST_MARKS = new Int32Array(4);
export const REST_SRC = 0;
export const REST_DST = 2;

/**
 * Whether `buf[at, stop)` (what follows the head's criticality: a line's rest up to its end) is the rest of a whole
 * stored record in the writer's form, for a record of the syslog endpoint or not (`syslog`) that had a format
 * field or not (`format`). `stop` is the line's end (no newline).
 */
export function isWholeRest(
  buf: Buffer,
  at: number,
  stop: number,
  syslog: boolean,
  format: boolean,
): boolean {
  if (syslog !== format) return false;
  let p = stringField(buf, at, stop, SEVERITY);
  p = stringField(buf, p, stop, CRITICALITY_SOURCE);
  const srcAt = p;
  p = stringField(buf, p, stop, SRC_IP);
  const dstAt = p;
  p = stringField(buf, p, stop, DST_IP);
  if (p === -1) return false;
  // Where the addresses' text lies (inside the quotes), for the decisions engine (output-line.ts).
  REST_MARKS[REST_SRC] = srcAt + SRC_IP.length + 1;
  REST_MARKS[REST_SRC + 1] = dstAt - 1;
  REST_MARKS[REST_DST] = dstAt + DST_IP.length + 1;
  REST_MARKS[REST_DST + 1] = p - 1;
  if (p !== -1 && startsWith(buf, p, stop, SRC_PORT)) p = port(buf, p + SRC_PORT.length, stop);
  p = p !== -1 && startsWith(buf, p, stop, DST_PORT) ? port(buf, p + DST_PORT.length, stop) : -1;
  p = stringField(buf, p, stop, PROTOCOL);
  p = stringField(buf, p, stop, THREAT);
  if (p !== -1 && startsWith(buf, p, stop, THREAT_ID)) p = string(buf, p + THREAT_ID.length, stop);
  if (p !== -1 && startsWith(buf, p, stop, DETECTED_AT)) p = string(buf, p + DETECTED_AT.length, stop);
  for (const e of ENRICHMENT) {
    if (p !== -1 && startsWith(buf, p, stop, e.country)) p = string(buf, p + e.country.length, stop);
    if (p !== -1 && startsWith(buf, p, stop, e.asn)) p = asn(buf, p + e.asn.length, stop);
    if (p !== -1 && startsWith(buf, p, stop, e.org)) p = string(buf, p + e.org.length, stop);
  }
  p = stringField(buf, p, stop, REMOTE_ADDR);
  if (p === -1 || !startsWith(buf, p, stop, ORIGINAL)) return false;
  p += ORIGINAL.length;
  // A syslog record's original is the message's text; the HTTPS routes' the object as received.
  if (byteAt(buf, p, stop) !== (syslog ? QUOTE : BRACE_OPEN)) return false;
  p = value(buf, p, stop, 0);
  if (p === -1) return false;
  if (startsWith(buf, p, stop, REPAIRED)) p += REPAIRED.length;
  if (startsWith(buf, p, stop, TRUNCATED)) p += TRUNCATED.length;
  if (startsWith(buf, p, stop, OTHER)) p += OTHER.length;
  if (startsWith(buf, p, stop, DEDUPE_KEY)) p = string(buf, p + DEDUPE_KEY.length, stop);
  // The record's own closing brace ends the line: nothing after it.
  return p === stop - 1 && byteAt(buf, p, stop) === BRACE_CLOSE;
}

/** After the field named by `prefix` (`,"name":`) and its string value: where the next field starts; -1 if none. */
function stringField(buf: Buffer, p: number, stop: number, prefix: Buffer): number {
  return p !== -1 && startsWith(buf, p, stop, prefix) ? string(buf, p + prefix.length, stop) : -1;
}

/** The byte at `p` of the line, or -1 past its end (the buffer may hold the next line there). */
function byteAt(buf: Buffer, p: number, stop: number): number {
  return p < stop ? (buf[p] as number) : -1;
}

/**
 * The bytes a JSON string's scan stops at (1): its quote, a backslash, and the control bytes it refuses raw.
 * One look-up per byte, not three comparisons: most of a line's bytes are inside strings.
 */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOP[c] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/**
 * The buffer last scanned as 32-bit words (aligned in its ArrayBuffer), and how many bytes before its own start
 * the first word starts: a string's bytes are looked at four at a time (most of a line's bytes are in strings).
 */
let wordsOf: Uint8Array | null = null;
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);
let wordBase = 0;

function wordView(buf: Uint8Array): void {
  wordsOf = buf;
  const from = buf.byteOffset & ~3;
  words = new Int32Array(buf.buffer, from, (buf.byteOffset + buf.length - from) >> 2);
  wordBase = buf.byteOffset - from;
}

/** After the JSON string starting at `p` (its opening quote); -1 if it is none (a raw control byte, a bad escape). */
function string(buf: Buffer, p: number, stop: number): number {
  if (byteAt(buf, p, stop) !== QUOTE) return -1;
  if (wordsOf !== buf) wordView(buf);
  let i = p + 1;
  for (;;) {
    // Byte by byte up to a word's start, then four bytes at a time while none of them is a quote, a backslash or a
    // control byte (bit tricks: a byte equal to the quote's, to the backslash's, or below 0x20 sets its top bit),
    // then byte by byte to the byte that stopped the words.
    while (((i + wordBase) & 3) !== 0 && i < stop && STRING_STOP[buf[i] as number] === 0) i++;
    if (((i + wordBase) & 3) === 0) {
      let w = (i + wordBase) >> 2;
      const last = (stop + wordBase) >> 2;
      while (w < last) {
        const x = words[w] as number;
        const q = x ^ 0x22222222;
        const b = x ^ 0x5c5c5c5c;
        if ((((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b) | ((x - 0x20202020) & ~x)) & 0x80808080) break;
        w++;
      }
      i = (w << 2) - wordBase;
      while (i < stop && STRING_STOP[buf[i] as number] === 0) i++;
    }
    if (i >= stop) return -1;
    const c = buf[i] as number;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    // A backslash: its escape, then on.
    const e = i + 1 < stop ? (buf[i + 1] as number) : 0;
    if (ESCAPES[e] === 1) i += 2;
    else if (
      e === 0x75 &&
      i + 5 < stop &&
      HEX[buf[i + 2] as number] &&
      HEX[buf[i + 3] as number] &&
      HEX[buf[i + 4] as number] &&
      HEX[buf[i + 5] as number]
    )
      i += 6;
    else return -1;
  }
}

/** After a port (an integer 0-65535 in JSON's spelling: no sign, no leading zero, no fraction); -1 if none. */
function port(buf: Buffer, p: number, stop: number): number {
  let n = 0;
  let i = p;
  while (i < stop && i - p < 6) {
    const c = buf[i] as number;
    if (c < ZERO || c > NINE) break;
    n = n * 10 + (c - ZERO);
    i++;
  }
  if (i === p || i - p > 5 || n > 65535 || (buf[p] === ZERO && i - p > 1)) return -1;
  const next = byteAt(buf, i, stop);
  return next === COMMA || next === BRACE_CLOSE ? i : -1;
}

/** After an AS number (an integer 0 to 2^32-1, no sign, no leading zero); -1 if none. */
function asn(buf: Buffer, p: number, stop: number): number {
  let n = 0;
  let i = p;
  while (i < stop && i - p < 11) {
    const c = buf[i] as number;
    if (c < ZERO || c > NINE) break;
    n = n * 10 + (c - ZERO);
    i++;
  }
  if (i === p || n > 0xffffffff || (buf[p] === ZERO && i - p > 1)) return -1;
  const next = byteAt(buf, i, stop);
  return next === COMMA || next === BRACE_CLOSE ? i : -1;
}

function whitespace(buf: Buffer, p: number, stop: number): number {
  while (p < stop) {
    const c = buf[p] as number;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    p++;
  }
  return p;
}

/** After the JSON value starting at `p` (no whitespace before it); -1 if none. */
function value(buf: Buffer, p: number, stop: number, depth: number): number {
  if (p >= stop) return -1;
  const c = buf[p] as number;
  if (c === QUOTE) return string(buf, p, stop);
  if (c === BRACE_OPEN) return depth < MAX_DEPTH ? object(buf, p, stop, depth + 1) : -1;
  if (c === BRACKET_OPEN) return depth < MAX_DEPTH ? array(buf, p, stop, depth + 1) : -1;
  if (c === MINUS || (c >= ZERO && c <= NINE)) return number(buf, p, stop);
  if (startsWith(buf, p, stop, TRUE)) return p + TRUE.length;
  if (startsWith(buf, p, stop, FALSE)) return p + FALSE.length;
  if (startsWith(buf, p, stop, NULL)) return p + NULL.length;
  return -1;
}

function object(buf: Buffer, p: number, stop: number, depth: number): number {
  p = whitespace(buf, p + 1, stop);
  if (byteAt(buf, p, stop) === BRACE_CLOSE) return p + 1;
  for (;;) {
    p = string(buf, p, stop);
    if (p === -1) return -1;
    p = whitespace(buf, p, stop);
    if (byteAt(buf, p, stop) !== COLON) return -1;
    p = value(buf, whitespace(buf, p + 1, stop), stop, depth);
    if (p === -1) return -1;
    p = whitespace(buf, p, stop);
    if (byteAt(buf, p, stop) === BRACE_CLOSE) return p + 1;
    if (byteAt(buf, p, stop) !== COMMA) return -1;
    p = whitespace(buf, p + 1, stop);
  }
}

function array(buf: Buffer, p: number, stop: number, depth: number): number {
  p = whitespace(buf, p + 1, stop);
  if (byteAt(buf, p, stop) === BRACKET_CLOSE) return p + 1;
  for (;;) {
    p = value(buf, p, stop, depth);
    if (p === -1) return -1;
    p = whitespace(buf, p, stop);
    if (byteAt(buf, p, stop) === BRACKET_CLOSE) return p + 1;
    if (byteAt(buf, p, stop) !== COMMA) return -1;
    p = whitespace(buf, p + 1, stop);
  }
}

/** After a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; -1 if none. */
function number(buf: Buffer, p: number, stop: number): number {
  if (byteAt(buf, p, stop) === MINUS) p++;
  if (p >= stop) return -1;
  if (byteAt(buf, p, stop) === ZERO) p++;
  else p = digits(buf, p, stop);
  if (p === -1) return -1;
  if (byteAt(buf, p, stop) === DOT) {
    p = digits(buf, p + 1, stop);
    if (p === -1) return -1;
  }
  const e = byteAt(buf, p, stop);
  if (e === 0x65 || e === 0x45) {
    p++;
    if (byteAt(buf, p, stop) === PLUS || byteAt(buf, p, stop) === MINUS) p++;
    p = digits(buf, p, stop);
  }
  return p;
}

/** After one or more digits; -1 if there is none at `p`. */
function digits(buf: Buffer, p: number, stop: number): number {
  const from = p;
  while (p < stop && (buf[p] as number) >= ZERO && (buf[p] as number) <= NINE) p++;
  return p === from ? -1 : p;
}
