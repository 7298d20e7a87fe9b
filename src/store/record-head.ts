// The head of a stored line: the fields an output's filter and its receivers' envelopes read (id, time,
// sensor, endpoint, criticality), read off the bytes of a line in the writer's own form without parsing it.
import { isRecordEndpoint, type StoredRecord } from '../records/stored-record.js';
import { READABLE_SENSOR_NAME } from './registry.js';

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

/** The last sensor name seen (its bytes) and whether it is readable. */
let lastSensorBytes = Buffer.alloc(0);
let lastSensorReadable = false;

/**
 * Where the head's values lie in the line last checked by `markRecordHead` (absolute indexes into its buffer, a
 * start and an end each): id, received_at, sensor, endpoint, then the criticality. One array, filled in place:
 * a feed keeps these numbers in its line object instead of four strings per record held through a delivery.
 */
export const HEAD_MARKS = new Int32Array(11);
export const HEAD_ID = 0;
export const HEAD_TIME = 2;
export const HEAD_SENSOR = 4;
export const HEAD_ENDPOINT = 6;
export const HEAD_CRITICALITY = 8;
/** Where the line's rest starts (just after the criticality), and 1 when the head had a format field. */
export const HEAD_REST = 9;
export const HEAD_FORMAT = 10;

/**
 * Whether the line `buf[start, stop)` (no newline) has the form the record log writes (records/stored-line.ts:
 * these fields first, in this order, plain strings, a one-digit criticality, one object ending in `}`, no NUL
 * byte) and its head passes the shape check every reader applies (record-shape.ts): then HEAD_MARKS says where
 * its values are, read with `headValue`. false for any other line: the caller parses that one whole.
 */
export function markRecordHead(buf: Buffer, start: number, stop: number): boolean {
  // A page of zeros (a power cut on some filesystems) inside an otherwise well-framed line.
  if (stop - start < 64 || buf[stop - 1] !== BRACE_CLOSE) return false;
  // Searched in a view of the line alone: from `start`, indexOf would search the rest of the chunk each time.
  if ((start === 0 && stop === buf.length ? buf : buf.subarray(start, stop)).indexOf(0) !== -1) return false;
  // Each field's value ends at its closing quote; the next field starts just after it.
  const idEnd = valueEnd(buf, start, stop, ID);
  const timeEnd = idEnd === -1 ? -1 : valueEnd(buf, idEnd + 1, stop, RECEIVED_AT);
  const sensorEnd = timeEnd === -1 ? -1 : valueEnd(buf, timeEnd + 1, stop, SENSOR);
  const endpointEnd = sensorEnd === -1 ? -1 : valueEnd(buf, sensorEnd + 1, stop, ENDPOINT);
  if (endpointEnd === -1) return false;
  const timeStart = idEnd + 1 + RECEIVED_AT.length;
  const sensorStart = timeEnd + 1 + SENSOR.length;
  const endpointStart = sensorEnd + 1 + ENDPOINT.length;
  // The checks make short-lived strings; only the numbers are kept.
  if (Number.isNaN(Date.parse(buf.toString('latin1', timeStart, timeEnd)))) return false;
  if (!readableSensor(buf, sensorStart, sensorEnd)) return false;
  if (!isRecordEndpoint(buf.toString('latin1', endpointStart, endpointEnd))) return false;
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
  return true;
}

/** One head value's text (`field`: HEAD_ID, HEAD_TIME, HEAD_SENSOR or HEAD_ENDPOINT): UTF-8 for the id and the sensor. */
export function headValue(buf: Buffer, field: number, start: number, end: number): string {
  return buf.toString(field === HEAD_ID || field === HEAD_SENSOR ? 'utf8' : 'latin1', start, end);
}

/** Whether a sensor name is readable, the last one's answer kept: a busy sensor's lines follow one another. */
function readableSensor(buf: Buffer, from: number, to: number): boolean {
  if (
    to - from !== lastSensorBytes.length ||
    buf.compare(lastSensorBytes, 0, lastSensorBytes.length, from, to) !== 0
  ) {
    const sensor = buf.toString('utf8', from, to);
    lastSensorBytes = Buffer.from(sensor, 'utf8');
    lastSensorReadable = READABLE_SENSOR_NAME.test(sensor);
  }
  return lastSensorReadable;
}

/** Where the plain string value of the field starting at `at` with `prefix` (`,"name":"`) ends; -1 if none. */
function valueEnd(buf: Buffer, at: number, stop: number, prefix: Buffer): number {
  return startsWith(buf, at, stop, prefix) ? stringEnd(buf, at + prefix.length, stop) : -1;
}

/** A byte loop: a native compare per field cost more in the call than in the comparing. */
function startsWith(buf: Buffer, at: number, stop: number, prefix: Buffer): boolean {
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
