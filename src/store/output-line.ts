// A stored line as both backends' output feeds hand it over: checked as the feed was asked (the whole record, or
// its head), its text and its record made only when a receiver reads them (most send the bytes as they are).
import type { StoredRecord } from '../records/stored-record.js';
import { type RecordHead, readRecordHead } from './record-head.js';
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

  get line(): string {
    this.#line ??= this.bytes.toString('utf8');
    return this.#line;
  }

  /**
   * Parsed at the first read. A line whose head passed but whose rest does not parse (a fault inside the line
   * on disk) gives its head: the receivers that read the record (CEF, mail, Slack) ask for whole checks.
   */
  get record(): StoredRecord {
    this.#record ??= parseStoredRecord(this.line) ?? (this.head as StoredRecord);
    return this.#record;
  }
}

/**
 * The line of `buf` from `start` to `stop` (no newline) as handed to an output, or null when it is not a stored
 * record (passed, never handed over). `check`: see OutputFeedOptions.
 */
export function outputLineOf(
  buf: Buffer,
  start: number,
  stop: number,
  check: 'record' | 'head',
): OutputLine | null {
  const bytes = buf.subarray(start, stop);
  if (check === 'head') {
    const head = readRecordHead(bytes);
    if (head !== null) return new StoredOutputLine(bytes, head, null, null);
  }
  const line = bytes.toString('utf8');
  const record = parseStoredRecord(line);
  return record === null ? null : new StoredOutputLine(bytes, record, line, record);
}
