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

/** The last sensor name seen and whether it is readable: a busy sensor's lines follow one another. */
let lastSensor = '';
let lastSensorReadable = false;

/**
 * The head of the stored line `buf` (its bytes, no newline), when the line has the form the record log writes (records/stored-line.ts: these fields first, in this order, plain strings, a one-digit criticality,
 * one object ending in `}`, no NUL byte) and its fields pass the shape check every reader applies
 * (record-shape.ts). null for any other line: the caller parses that one whole, as before.
 */
export function readRecordHead(buf: Buffer): RecordHead | null {
  const stop = buf.length;
  // A page of zeros (a power cut on some filesystems) inside an otherwise well-framed line.
  if (stop < 64 || buf[stop - 1] !== BRACE_CLOSE || buf.indexOf(0) !== -1) return null;
  // Each field's value ends at its closing quote; the next field starts just after it.
  const idEnd = valueEnd(buf, 0, ID);
  const timeEnd = idEnd === -1 ? -1 : valueEnd(buf, idEnd + 1, RECEIVED_AT);
  const sensorEnd = timeEnd === -1 ? -1 : valueEnd(buf, timeEnd + 1, SENSOR);
  const endpointEnd = sensorEnd === -1 ? -1 : valueEnd(buf, sensorEnd + 1, ENDPOINT);
  if (endpointEnd === -1) return null;
  const receivedAt = buf.toString('latin1', idEnd + 1 + RECEIVED_AT.length, timeEnd);
  if (Number.isNaN(Date.parse(receivedAt))) return null;
  const sensor = buf.toString('utf8', timeEnd + 1 + SENSOR.length, sensorEnd);
  if (sensor !== lastSensor) {
    lastSensor = sensor;
    lastSensorReadable = READABLE_SENSOR_NAME.test(sensor);
  }
  if (!lastSensorReadable) return null;
  const endpoint = buf.toString('latin1', sensorEnd + 1 + ENDPOINT.length, endpointEnd);
  if (!isRecordEndpoint(endpoint)) return null;
  let at = endpointEnd + 1;
  if (startsWith(buf, at, FORMAT)) {
    at = valueEnd(buf, at, FORMAT) + 1;
    if (at === 0) return null;
  }
  if (!startsWith(buf, at, CRITICALITY)) return null;
  at += CRITICALITY.length;
  const criticality = (buf[at] ?? 0) - ZERO;
  const after = buf[at + 1];
  if (criticality < 0 || criticality > 4 || (after !== COMMA && after !== BRACE_CLOSE)) return null;
  const id = buf.toString('utf8', ID.length, idEnd);
  return { id, received_at: receivedAt, sensor, endpoint, criticality };
}

/** Where the plain string value of the field starting at `at` with `prefix` (`,"name":"`) ends; -1 if none. */
function valueEnd(buf: Buffer, at: number, prefix: Buffer): number {
  return startsWith(buf, at, prefix) ? stringEnd(buf, at + prefix.length, buf.length) : -1;
}

/** A byte loop: a native compare per field cost more in the call than in the comparing. */
function startsWith(buf: Buffer, at: number, prefix: Buffer): boolean {
  if (at + prefix.length > buf.length) return false;
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
