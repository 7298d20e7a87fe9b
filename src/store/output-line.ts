// A stored line as both backends' output feeds hand it over: the whole record shape-checked (record-shape.ts),
// as every reader does; its text and its record kept only when a receiver reads them (most send the bytes as
// they are).
import type { StoredRecord } from '../records/stored-record.js';
import {
  HEAD_CRITICALITY,
  HEAD_ENDPOINT,
  HEAD_FORMAT,
  HEAD_ID,
  HEAD_MARKS,
  HEAD_REST,
  HEAD_SENSOR,
  HEAD_TIME,
  headValue,
  markRecordHead,
  type RecordHead,
} from './record-head.js';
import { isWholeRest } from './record-rest.js';
import { parseStoredRecord } from './record-shape.js';
import type { OutputLine } from './store.js';

class StoredOutputLine implements OutputLine {
  readonly bytes: Buffer;
  readonly head: RecordHead;
  #line: string | null;
  #record: StoredRecord | null;

  constructor(bytes: Buffer, head: RecordHead, line: string | null, record: StoredRecord | null) {
    this.bytes = bytes;
    this.head = head;
    this.#line = line;
    this.#record = record;
  }

  get id(): string {
    return this.head.id;
  }

  get byteLength(): number {
    return this.bytes.length;
  }

  get line(): string {
    this.#line ??= this.bytes.toString('utf8');
    return this.#line;
  }

  get record(): StoredRecord {
    this.#record ??= parseStoredRecord(this.line) ?? (this.head as StoredRecord);
    return this.#record;
  }
}

/**
 * A line whose head was checked in place (`check: 'head'`): its buffer, where it lies, and where its head's values
 * lie, as numbers. A batch holds hundreds of these through a delivery, every one copied by the young-generation
 * collector at each scavenge meanwhile: one small object each, where the head's object, its four strings and the
 * line's own Buffer view were eight (what survived into the old space while a collector forwarded halved:
 * docs/performance.md). The head's values, the bytes' view and the text are made when a filter or a receiver
 * reads them.
 */
class MarkedOutputLine implements OutputLine, RecordHead {
  readonly #buf: Buffer;
  readonly #start: number;
  readonly #stop: number;
  readonly #idStart: number;
  readonly #idEnd: number;
  readonly #timeStart: number;
  readonly #timeEnd: number;
  readonly #sensorStart: number;
  readonly #sensorEnd: number;
  readonly #endpointStart: number;
  readonly #endpointEnd: number;
  readonly criticality: number;
  #line: string | null = null;
  #record: StoredRecord | null = null;

  constructor(buf: Buffer, start: number, stop: number) {
    this.#buf = buf;
    this.#start = start;
    this.#stop = stop;
    // Small integers in the object's own fields: no allocation beside it.
    const m = HEAD_MARKS;
    this.#idStart = m[HEAD_ID] as number;
    this.#idEnd = m[HEAD_ID + 1] as number;
    this.#timeStart = m[HEAD_TIME] as number;
    this.#timeEnd = m[HEAD_TIME + 1] as number;
    this.#sensorStart = m[HEAD_SENSOR] as number;
    this.#sensorEnd = m[HEAD_SENSOR + 1] as number;
    this.#endpointStart = m[HEAD_ENDPOINT] as number;
    this.#endpointEnd = m[HEAD_ENDPOINT + 1] as number;
    this.criticality = m[HEAD_CRITICALITY] as number;
  }

  get id(): string {
    return headValue(this.#buf, HEAD_ID, this.#idStart, this.#idEnd);
  }

  get received_at(): string {
    return headValue(this.#buf, HEAD_TIME, this.#timeStart, this.#timeEnd);
  }

  get sensor(): string {
    return headValue(this.#buf, HEAD_SENSOR, this.#sensorStart, this.#sensorEnd);
  }

  get endpoint(): RecordHead['endpoint'] {
    return headValue(
      this.#buf,
      HEAD_ENDPOINT,
      this.#endpointStart,
      this.#endpointEnd,
    ) as RecordHead['endpoint'];
  }

  /** The line is its own head: a filter reads only the values it tests. */
  get head(): RecordHead {
    return this;
  }

  get bytes(): Buffer {
    return this.#buf.subarray(this.#start, this.#stop);
  }

  get byteLength(): number {
    return this.#stop - this.#start;
  }

  get line(): string {
    this.#line ??= this.#buf.toString('utf8', this.#start, this.#stop);
    return this.#line;
  }

  /** Parsed at the first read: the line passed the whole check off its bytes when the feed read it (outputLineOf). */
  get record(): StoredRecord {
    this.#record ??= parseStoredRecord(this.line) as StoredRecord;
    return this.#record;
  }
}

/**
 * The line of `buf` from `start` to `stop` (no newline) as handed to an output, or null when it is not exactly
 * one stored record (passed, never handed over: the caller counts it). Every line is checked whole, whatever
 * `check` says: a receiver that sends the bytes as they are must not send a record cut to its head, nor a second
 * object after the first. `check`: see OutputFeedOptions. With 'head', a line in the writer's own form is checked
 * off its bytes (its head, record-head.ts, then its rest, record-rest.ts: the answer the parse would give) and
 * keeps only where its head's values lie; any other line is parsed and shape-checked (record-shape.ts).
 */
export function outputLineOf(
  buf: Buffer,
  start: number,
  stop: number,
  check: 'record' | 'head',
): OutputLine | null {
  if (check === 'head' && markRecordHead(buf, start, stop)) {
    const m = HEAD_MARKS;
    const syslog = (m[HEAD_ENDPOINT + 1] as number) - (m[HEAD_ENDPOINT] as number) === SYSLOG_LENGTH;
    if (isWholeRest(buf, m[HEAD_REST] as number, stop, syslog, m[HEAD_FORMAT] === 1))
      return new MarkedOutputLine(buf, start, stop);
  }
  const bytes = buf.subarray(start, stop);
  const line = bytes.toString('utf8');
  const record = parseStoredRecord(line);
  return record === null ? null : new StoredOutputLine(bytes, record, line, record);
}

/** The one endpoint name of this length ('firewall' 8, 'generic' 7), as the head check passed it. */
const SYSLOG_LENGTH = 'syslog'.length;

/** What the decisions engine reads of a record beyond its head (rules.ts, engine.ts). */
export interface EngineFields {
  readonly src_ip: string;
  readonly dst_ip: string;
  /** Read when a rule tests the threat's name. */
  threat(): string;
}

const SRC_IP_KEY = Buffer.from(',"src_ip":"');
const DST_IP_KEY = Buffer.from(',"dst_ip":"');
const THREAT_KEY = Buffer.from(',"threat":"');

/**
 * The addresses and the threat of a line handed over by a feed, read off its bytes where the feed checked the
 * line whole in the writer's form (`check: 'head'`: its head, then its rest, record-rest.ts): those fields then
 * come before `original` in that order, and a key's bytes cannot occur inside a JSON string before them (each `"`
 * there is escaped), so the first occurrence is the field. A value with an escape, or any other line, is read
 * from the parsed record (which went through the same shape check).
 */
export function engineFieldsOf(line: OutputLine): EngineFields {
  if (line instanceof MarkedOutputLine) {
    const bytes = line.bytes;
    const src = plainValue(bytes, SRC_IP_KEY, 0);
    const dst = src === null ? null : plainValue(bytes, DST_IP_KEY, src.end);
    if (src !== null && dst !== null) {
      const after = dst.end;
      return {
        src_ip: src.value,
        dst_ip: dst.value,
        threat: () => plainValue(bytes, THREAT_KEY, after)?.value ?? line.record.threat,
      };
    }
  }
  const record = line.record;
  return { src_ip: record.src_ip, dst_ip: record.dst_ip, threat: () => record.threat };
}

/** The value of the first string field `key` (`,"name":"`) from `from` on, when it has no escape; else null. */
function plainValue(bytes: Buffer, key: Buffer, from: number): { value: string; end: number } | null {
  const at = bytes.indexOf(key, from);
  if (at === -1) return null;
  const start = at + key.length;
  for (let i = start; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x22) return { value: bytes.toString('utf8', start, i), end: i + 1 };
    if (c === 0x5c) return null;
  }
  return null;
}
