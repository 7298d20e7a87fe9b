// A stored line as both backends' output feeds hand it over: the whole record shape-checked (record-shape.ts),
// as every reader does; its text and its record kept only when a receiver reads them (most send the bytes as
// they are).
import type { StoredRecord } from '../records/stored-record.js';
import {
  HEAD_CRITICALITY,
  HEAD_FORMAT,
  HEAD_HOUR,
  HEAD_ID,
  HEAD_MARKS,
  HEAD_MS_IN_HOUR,
  HEAD_REST,
  HEAD_TEXT,
  HEAD_TIME,
  HOUR_MS,
  headValue,
  markRecordHead,
  NO_HOUR,
  type RecordHead,
} from './record-head.js';
import { isWholeRest, REST_DST, REST_MARKS, REST_SRC } from './record-rest.js';
import { parseStoredRecord } from './record-shape.js';
import type { OutputLine } from './store.js';
import { isoTimeMs } from './stored-time.js';

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
 * and its addresses lie, as numbers. A batch holds hundreds of these through a delivery, every one copied by the
 * young-generation collector at each scavenge meanwhile: one small object each, where the head's object, its
 * four strings and the line's own Buffer view were eight (what survived into the old space while a collector
 * forwarded halved: docs/performance.md). The sensor and the endpoint are strings shared by the lines that have
 * them (record-head.ts HEAD_TEXT); the other values, the bytes' view and the text are made when a filter, a
 * receiver or the decisions engine reads them.
 */
class MarkedOutputLine implements OutputLine, RecordHead {
  readonly #buf: Buffer;
  readonly #start: number;
  readonly #stop: number;
  readonly #idEnd: number;
  readonly #timeStart: number;
  readonly #timeEnd: number;
  readonly #srcStart: number;
  readonly #srcEnd: number;
  readonly #dstStart: number;
  readonly #dstEnd: number;
  /** received_at as two small integers (record-head.ts HEAD_HOUR): no heap number per line. */
  readonly #hour: number;
  readonly #msInHour: number;
  readonly sensor: string;
  readonly endpoint: RecordHead['endpoint'];
  readonly criticality: number;
  #line: string | null = null;
  #record: StoredRecord | null = null;

  constructor(buf: Buffer, start: number, stop: number) {
    this.#buf = buf;
    this.#start = start;
    this.#stop = stop;
    // Small integers in the object's own fields: no allocation beside it.
    const m = HEAD_MARKS;
    this.#idEnd = m[HEAD_ID + 1] as number;
    this.#timeStart = m[HEAD_TIME] as number;
    this.#timeEnd = m[HEAD_TIME + 1] as number;
    this.#hour = m[HEAD_HOUR] as number;
    this.#msInHour = m[HEAD_MS_IN_HOUR] as number;
    const r = REST_MARKS;
    this.#srcStart = r[REST_SRC] as number;
    this.#srcEnd = r[REST_SRC + 1] as number;
    this.#dstStart = r[REST_DST] as number;
    this.#dstEnd = r[REST_DST + 1] as number;
    this.sensor = HEAD_TEXT.sensor;
    this.endpoint = HEAD_TEXT.endpoint;
    this.criticality = m[HEAD_CRITICALITY] as number;
  }

  get id(): string {
    return headValue(this.#buf, HEAD_ID, this.#start + ID_OFFSET, this.#idEnd);
  }

  get received_at(): string {
    return headValue(this.#buf, HEAD_TIME, this.#timeStart, this.#timeEnd);
  }

  /** received_at as epoch ms (Date.parse's answer), as the check read it off the bytes. */
  receivedAtMs(): number {
    if (this.#hour === NO_HOUR) return isoTimeMs(this.#buf, this.#timeStart, this.#timeEnd);
    return this.#hour * HOUR_MS + this.#msInHour;
  }

  /** The source address off the bytes, or null when it has an escape (then read from the parse). */
  srcIp(): string | null {
    return plainText(this.#buf, this.#srcStart, this.#srcEnd);
  }

  /** The destination address off the bytes, or null when it has an escape. */
  dstIp(): string | null {
    return plainText(this.#buf, this.#dstStart, this.#dstEnd);
  }

  /** Whether the source is a dotted IPv4 address in canonical form, its bytes then written to `into`. */
  srcIpv4(into: Uint8Array): boolean {
    return canonicalIpv4At(this.#buf, this.#srcStart, this.#srcEnd, into);
  }

  /** The same for the destination. */
  dstIpv4(into: Uint8Array): boolean {
    return canonicalIpv4At(this.#buf, this.#dstStart, this.#dstEnd, into);
  }

  /** The threat off the bytes (its key's first occurrence after the addresses), or null when it has an escape. */
  threat(): string | null {
    return plainValue(this.#buf, THREAT_KEY, this.#dstEnd + 1, this.#stop);
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

/** Where the id's value starts in a line of the writer's form: just after `{"id":"`. */
const ID_OFFSET = '{"id":"'.length;

/** The text of `buf[from, to)` when it has no escape (a plain JSON string's inside); else null. */
function plainText(buf: Buffer, from: number, to: number): string | null {
  for (let i = from; i < to; i++) if (buf[i] === 0x5c) return null;
  return buf.toString('utf8', from, to);
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
    const syslog = HEAD_TEXT.endpoint === 'syslog';
    if (isWholeRest(buf, m[HEAD_REST] as number, stop, syslog, m[HEAD_FORMAT] === 1))
      return new MarkedOutputLine(buf, start, stop);
  }
  const bytes = buf.subarray(start, stop);
  const line = bytes.toString('utf8');
  const record = parseStoredRecord(line);
  return record === null ? null : new StoredOutputLine(bytes, record, line, record);
}

/** What the decisions engine reads of a record beyond its head (rules.ts, engine.ts). */
export interface EngineFields {
  readonly src_ip: string;
  readonly dst_ip: string;
  /** Read when a rule tests the threat's name. */
  threat(): string;
}

const THREAT_KEY = Buffer.from(',"threat":"');

/*
 * The addresses and the threat of a line handed over by a feed, read off its bytes where the feed checked the
 * line whole in the writer's form (`check: 'head'`: its head, then its rest, record-rest.ts, which marked where the
 * addresses lie). The threat comes after them, before `original`, and a key's bytes cannot occur inside a JSON
 * string before it (each `"` there is escaped), so its key's first occurrence after the addresses is the field. A
 * value with an escape, or any other line, is read from the parsed record (which went through the same shape
 * check). One field at a time: the engine reads a record's source for most rules, its destination and its threat
 * only for the rules that ask (no object per record).
 */

/** The source address of a line handed over by a feed (see above). */
export function srcIpOf(line: OutputLine): string {
  return (line instanceof MarkedOutputLine ? line.srcIp() : null) ?? line.record.src_ip;
}

/** The destination address of a line handed over by a feed. */
export function dstIpOf(line: OutputLine): string {
  return (line instanceof MarkedOutputLine ? line.dstIp() : null) ?? line.record.dst_ip;
}

/**
 * Whether the source address of a line handed over by a feed is a dotted IPv4 address in canonical form (no
 * leading zeros: formatNetwork's), its bytes then written to `into`: read off the line's bytes where it was checked
 * in the writer's form, with no text made (the decisions engine asks this of every record).
 */
export function srcIpv4Of(line: OutputLine, into: Uint8Array): boolean {
  if (line instanceof MarkedOutputLine) return line.srcIpv4(into);
  return canonicalIpv4(line.record.src_ip, into);
}

/** The same for the destination address. */
export function dstIpv4Of(line: OutputLine, into: Uint8Array): boolean {
  if (line instanceof MarkedOutputLine) return line.dstIpv4(into);
  return canonicalIpv4(line.record.dst_ip, into);
}

/** Where canonicalIpv4 copies a text's characters (a canonical address has at most 15). */
const IPV4_TEXT = new Uint8Array(15);

/** Whether `text` is a dotted IPv4 address in canonical form, its bytes then written to `into`. */
export function canonicalIpv4(text: string, into: Uint8Array): boolean {
  if (text.length < 7 || text.length > 15) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x39) return false;
    IPV4_TEXT[i] = c;
  }
  return canonicalIpv4At(IPV4_TEXT, 0, text.length, into);
}

/** Whether `buf[from, to)` spells a dotted IPv4 address in canonical form, its bytes then written to `into`. */
function canonicalIpv4At(buf: Uint8Array, from: number, to: number, into: Uint8Array): boolean {
  if (to - from < 7 || to - from > 15) return false;
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = from; i <= to; i++) {
    const c = i === to ? 0x2e : (buf[i] as number);
    if (c === 0x2e) {
      if (digits === 0 || part > 3) return false;
      into[part++] = value;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && value === 0) return false;
      value = value * 10 + (c - 0x30);
      if (value > 255) return false;
      digits++;
    } else return false;
  }
  return part === 4;
}

/** The threat of a line handed over by a feed. */
export function threatOf(line: OutputLine): string {
  return (line instanceof MarkedOutputLine ? line.threat() : null) ?? line.record.threat;
}

/** All three at once (tests compare them with the parse). */
export function engineFieldsOf(line: OutputLine): EngineFields {
  return { src_ip: srcIpOf(line), dst_ip: dstIpOf(line), threat: () => threatOf(line) };
}

/** When a line was received, as epoch ms (Date.parse of its received_at): off the bytes of a checked line. */
export function receivedAtMsOf(line: OutputLine): number {
  return line instanceof MarkedOutputLine ? line.receivedAtMs() : Date.parse(line.head.received_at);
}

/** The value of the first string field `key` (`,"name":"`) in `buf[from, stop)`, when it has no escape; else null. */
function plainValue(buf: Buffer, key: Buffer, from: number, stop: number): string | null {
  const at = buf.indexOf(key, from);
  if (at === -1 || at >= stop) return null;
  const start = at + key.length;
  for (let i = start; i < stop; i++) {
    const c = buf[i];
    if (c === 0x22) return buf.toString('utf8', start, i);
    if (c === 0x5c) return null;
  }
  return null;
}
