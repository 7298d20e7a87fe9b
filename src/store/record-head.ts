// The head of a stored line: the fields an output's filter and its receivers' envelopes read (id, time,
// sensor, endpoint, criticality), read off the bytes of a line in the writer's own form without parsing it.
import { RECORD_ENDPOINTS, type RecordEndpoint, type StoredRecord } from '../records/stored-record.js';
import { READABLE_SENSOR_NAME } from './registry.js';
import { isoTimeMs } from './stored-time.js';

/** What a filter and an envelope (an idempotency key, a timestamp, a syslog header) need of a record. */
export type RecordHead = Pick<StoredRecord, 'id' | 'received_at' | 'sensor' | 'endpoint' | 'criticality'>;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const BRACE_CLOSE = 0x7d;
const ZERO = 0x30;
const ID = Buffer.from('{"id":"');
const RECEIVED_AT = Buffer.from(',"received_at":"');
const SENSOR = Buffer.from(',"sensor":"');
const ENDPOINT = Buffer.from(',"endpoint":"');
const FORMAT = Buffer.from(',"format":"');
const CRITICALITY = Buffer.from(',"criticality":');

const ENDPOINT_BYTES = RECORD_ENDPOINTS.map((name) => Buffer.from(name, 'latin1'));

/** Sensor names seen lately, by a hash of their bytes: their bytes, their text, and null when not readable. */
const SENSOR_SLOTS = 256;
const sensorBytes: (Buffer | null)[] = new Array(SENSOR_SLOTS).fill(null);
const sensorTexts: (string | null)[] = new Array(SENSOR_SLOTS).fill(null);

/**
 * Where the head's values lie in the line last checked by `markRecordHead` (absolute indexes into its buffer, a
 * start and an end each): id, received_at, sensor, endpoint, then the criticality. One array, filled in place:
 * a feed keeps these numbers in its line object instead of four strings per record held through a delivery.
 */
export const HEAD_MARKS = new Int32Array(13);
export const HEAD_ID = 0;
export const HEAD_TIME = 2;
export const HEAD_SENSOR = 4;
export const HEAD_ENDPOINT = 6;
export const HEAD_CRITICALITY = 8;
/** Where the line's rest starts (just after the criticality), and 1 when the head had a format field. */
export const HEAD_REST = 9;
export const HEAD_FORMAT = 10;
/**
 * received_at as epoch ms in two small integers, its hour (ms / 3,600,000, floored) and the ms into that hour: a
 * line keeps these instead of reading the time off its bytes again. HEAD_HOUR is NO_HOUR for a time past what an
 * int32 holds there (years beyond about 245,000: read again).
 */
export const HEAD_HOUR = 11;
export const HEAD_MS_IN_HOUR = 12;
export const NO_HOUR = -0x80000000;
export const HOUR_MS = 3_600_000;

/**
 * The line last checked by `markRecordHead`: its sensor's text and its endpoint, strings shared by every line
 * with the same ones (a line keeps these instead of making its own).
 */
export const HEAD_TEXT: { sensor: string; endpoint: RecordEndpoint } = { sensor: '', endpoint: 'firewall' };

/**
 * Whether the line `buf[start, stop)` (no newline) has the form the record log writes (records/stored-line.ts:
 * these fields first, in this order, plain strings, a one-digit criticality, one object ending in `}`, no NUL
 * byte) and its head passes the shape check every reader applies (record-shape.ts): then HEAD_MARKS says where
 * its values are, read with `headValue`, and HEAD_TEXT holds its sensor and endpoint. false for any other line:
 * the caller parses that one whole. Only the head's bytes are looked at: its caller checks the rest
 * (record-rest.ts), which refuses a line with any byte below 0x20 outside JSON whitespace, so a page of zeros
 * (a power cut on some filesystems) inside an otherwise well-framed line is refused there, as by the parse.
 */
export function markRecordHead(buf: Buffer, start: number, stop: number): boolean {
  if (stop - start < 64 || buf[stop - 1] !== BRACE_CLOSE) return false;
  // Each field's value ends at its closing quote; the next field starts just after it.
  const idEnd = valueEnd(buf, start, stop, ID);
  const timeEnd = idEnd === -1 ? -1 : valueEnd(buf, idEnd + 1, stop, RECEIVED_AT);
  const sensorEnd = timeEnd === -1 ? -1 : valueEnd(buf, timeEnd + 1, stop, SENSOR);
  const endpointEnd = sensorEnd === -1 ? -1 : valueEnd(buf, sensorEnd + 1, stop, ENDPOINT);
  if (endpointEnd === -1) return false;
  const timeStart = idEnd + 1 + RECEIVED_AT.length;
  const sensorStart = timeEnd + 1 + SENSOR.length;
  const endpointStart = sensorEnd + 1 + ENDPOINT.length;
  // Checked off the bytes: a writer's time, a sensor seen before and the endpoint make no string.
  const ms = isoTimeMs(buf, timeStart, timeEnd);
  if (Number.isNaN(ms)) return false;
  const sensor = readableSensor(buf, sensorStart, sensorEnd);
  if (sensor === null) return false;
  const endpoint = endpointAt(buf, endpointStart, endpointEnd);
  if (endpoint === -1) return false;
  let at = endpointEnd + 1;
  const format = startsWith(buf, at, stop, FORMAT);
  if (format) {
    at = valueEnd(buf, at, stop, FORMAT) + 1;
    if (at === 0) return false;
  }
  if (!startsWith(buf, at, stop, CRITICALITY)) return false;
  at += CRITICALITY.length;
  const criticality = (at < stop ? (buf[at] as number) : 0) - ZERO;
  const after = at + 1 < stop ? buf[at + 1] : undefined;
  if (criticality < 0 || criticality > 4 || (after !== COMMA && after !== BRACE_CLOSE)) return false;
  const m = HEAD_MARKS;
  m[HEAD_ID] = start + ID.length;
  m[HEAD_ID + 1] = idEnd;
  m[HEAD_TIME] = timeStart;
  m[HEAD_TIME + 1] = timeEnd;
  m[HEAD_SENSOR] = sensorStart;
  m[HEAD_SENSOR + 1] = sensorEnd;
  m[HEAD_ENDPOINT] = endpointStart;
  m[HEAD_ENDPOINT + 1] = endpointEnd;
  m[HEAD_CRITICALITY] = criticality;
  m[HEAD_REST] = at + 1;
  m[HEAD_FORMAT] = format ? 1 : 0;
  const hour = Math.floor(ms / HOUR_MS);
  const fits = hour > NO_HOUR && hour <= 0x7fffffff;
  m[HEAD_HOUR] = fits ? hour : NO_HOUR;
  m[HEAD_MS_IN_HOUR] = fits ? ms - hour * HOUR_MS : 0;
  HEAD_TEXT.sensor = sensor;
  HEAD_TEXT.endpoint = RECORD_ENDPOINTS[endpoint] as RecordEndpoint;
  return true;
}

const LINE_START = /^\{"id":"[^"\\]{1,64}","received_at":"([^"\\]{1,40})"/;

/**
 * received_at (epoch ms) off the start of a line in the writer's form (its first 256 bytes hold it); NaN for
 * any other start (a damaged line, another publisher's message). Where a read by time starts: a segment whose
 * first record is past the window, or the first stream sequence past it.
 */
export function lineReceivedAt(start: string): number {
  const m = LINE_START.exec(start);
  return m ? Date.parse(m[1] as string) : Number.NaN;
}

/** Which of RECORD_ENDPOINTS `buf[from, to)` is; -1 for none. */
function endpointAt(buf: Buffer, from: number, to: number): number {
  for (let e = 0; e < ENDPOINT_BYTES.length; e++) {
    const name = ENDPOINT_BYTES[e] as Buffer;
    if (to - from === name.length && startsWith(buf, from, to, name)) return e;
  }
  return -1;
}

/** One head value's text (`field`: HEAD_ID, HEAD_TIME, HEAD_SENSOR or HEAD_ENDPOINT): UTF-8 for the id and the sensor. */
export function headValue(buf: Buffer, field: number, start: number, end: number): string {
  return buf.toString(field === HEAD_ID || field === HEAD_SENSOR ? 'utf8' : 'latin1', start, end);
}

/**
 * The sensor name `buf[from, to)` when it is readable, else null; the answer kept for the names seen lately (a
 * hash of the bytes picks a slot): many sensors' lines interleave, and each of them is decoded once.
 */
function readableSensor(buf: Buffer, from: number, to: number): string | null {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ (buf[i] as number), 0x01000193);
  const slot = (hash >>> 0) % SENSOR_SLOTS;
  const known = sensorBytes[slot];
  if (known !== null && known !== undefined && known.length === to - from && startsWith(buf, from, to, known))
    return sensorTexts[slot] as string | null;
  const sensor = buf.toString('utf8', from, to);
  const readable = READABLE_SENSOR_NAME.test(sensor) ? sensor : null;
  sensorBytes[slot] = Buffer.from(buf.subarray(from, to));
  sensorTexts[slot] = readable;
  return readable;
}

/** Where the plain string value of the field starting at `at` with `prefix` (`,"name":"`) ends; -1 if none. */
function valueEnd(buf: Buffer, at: number, stop: number, prefix: Buffer): number {
  return startsWith(buf, at, stop, prefix) ? stringEnd(buf, at + prefix.length, stop) : -1;
}

/**
 * Whether the line `buf[.., stop)` holds `prefix` at `at`. A byte loop: a native compare per field cost more in the
 * call than in the comparing.
 */
export function startsWith(buf: Buffer, at: number, stop: number, prefix: Buffer): boolean {
  if (at + prefix.length > stop) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

/**
 * Where the JSON string starting at `at` ends (its closing quote), when it needs no decoding beyond UTF-8: no
 * escape, no control character (which JSON refuses raw), not empty. -1 otherwise.
 */
function stringEnd(buf: Buffer, at: number, stop: number): number {
  for (let i = at; i < stop; i++) {
    const c = buf[i] as number;
    if (c === QUOTE) return i === at ? -1 : i;
    if (c === BACKSLASH || c < 0x20) return -1;
  }
  return -1;
}
