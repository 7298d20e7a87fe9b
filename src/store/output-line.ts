// A stored line as both backends' output feeds hand it over: the whole record shape-checked (record-shape.ts),
// as every reader does; its text and its record kept only when a receiver reads them (most send the bytes as
// they are).
import type { StoredRecord } from '../records/stored-record.js';
import {
  HEAD_CRITICALITY,
  HEAD_ENDPOINT,
  HEAD_ID,
  HEAD_MARKS,
  HEAD_SENSOR,
  HEAD_TIME,
  headValue,
  markRecordHead,
  type RecordHead,
} from './record-head.js';
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

  /** Parsed again at the first read: the line passed the whole check when the feed read it (outputLineOf). */
  get record(): StoredRecord {
    this.#record ??= parseStoredRecord(this.line) as StoredRecord;
    return this.#record;
  }
}

/**
 * The line of `buf` from `start` to `stop` (no newline) as handed to an output, or null when it is not exactly
 * one stored record (passed, never handed over: the caller counts it). Every line is parsed and shape-checked
 * whole, whatever `check` says: a receiver that sends the bytes as they are must not send a record cut to its
 * head, nor a second object after the first. `check`: see OutputFeedOptions ('head' keeps only where the head's
 * values lie, for a line in the writer's own form whose parsed head agrees with them).
 */
export function outputLineOf(
  buf: Buffer,
  start: number,
  stop: number,
  check: 'record' | 'head',
): OutputLine | null {
  const marked = check === 'head' && markRecordHead(buf, start, stop);
  const bytes = buf.subarray(start, stop);
  const line = bytes.toString('utf8');
  const record = parseStoredRecord(line);
  if (record === null) return null;
  if (marked && headAgrees(buf, record)) return new MarkedOutputLine(buf, start, stop);
  return new StoredOutputLine(bytes, record, line, record);
}

/**
 * Whether the head's values HEAD_MARKS points at are the parsed record's (a repeated key later in the line
 * would make JSON.parse, and so every other reader, see another value than the marks).
 */
function headAgrees(buf: Buffer, record: StoredRecord): boolean {
  const m = HEAD_MARKS;
  return (
    record.criticality === m[HEAD_CRITICALITY] &&
    record.endpoint ===
      headValue(buf, HEAD_ENDPOINT, m[HEAD_ENDPOINT] as number, m[HEAD_ENDPOINT + 1] as number) &&
    record.id === headValue(buf, HEAD_ID, m[HEAD_ID] as number, m[HEAD_ID + 1] as number) &&
    record.received_at === headValue(buf, HEAD_TIME, m[HEAD_TIME] as number, m[HEAD_TIME + 1] as number) &&
    record.sensor === headValue(buf, HEAD_SENSOR, m[HEAD_SENSOR] as number, m[HEAD_SENSOR + 1] as number)
  );
}
