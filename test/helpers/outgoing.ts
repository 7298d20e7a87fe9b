// Records as a forwarder hands them to a receiver (OutgoingRecord), for the receivers' tests.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log.js';
import type { OutgoingRecord } from '../../src/outputs/receivers/receiver.js';
import { newRecordId } from '../../src/records/record-id.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { storedGenericRecord } from './records.js';

export function outgoingRecord(overrides: Record<string, unknown> = {}): OutgoingRecord {
  const record = storedGenericRecord({ id: newRecordId(), ...overrides }) as unknown as StoredRecord;
  return { id: record.id, line: JSON.stringify(record), head: record, record };
}

/** `count` records; `overrides(i)` varies them (threat names, criticality, addresses). */
export function outgoingRecords(
  count: number,
  overrides: (i: number) => Record<string, unknown> = () => ({}),
): OutgoingRecord[] {
  return Array.from({ length: count }, (_, i) => outgoingRecord(overrides(i)));
}

/** The real logger writing JSON lines into memory: `text()` is everything it wrote (secrets must not be in it). */
export function memoryLogger(): { logger: Logger; text(): string } {
  let written = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', format: 'json', stream }), text: () => written };
}
