// The one shape check both backends apply to what they read back: what passes, what not, and that no input
// (any JSON text, any value) makes it throw; the skip report's rate limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { isStoredRecord, parseStoredRecord } from '../../src/store/record-shape.js';
import { createSkippedRecords } from '../../src/store/skipped-records.js';
import { storedGenericRecord } from '../helpers/records.js';

test('record shape: a stored record passes, anything lacking what readers rely on does not', () => {
  const good = storedGenericRecord();
  assert.equal(isStoredRecord(good), true);
  assert.deepEqual(parseStoredRecord(JSON.stringify(good)), good);
  for (const text of ['null', '5', '{}', '[]', '"x"', 'true', 'not json', '']) {
    assert.equal(parseStoredRecord(text), null, text);
  }
  const broken: Record<string, unknown>[] = [
    { id: 5 },
    { received_at: 'yesterday' },
    { received_at: 12 },
    { sensor: null },
    { sensor: '' },
    { sensor: 'x'.repeat(65) },
    { sensor: 'fw\u202e1' },
    { sensor: 'fw\u001b[2J' },
    { endpoint: 'relp' },
    { criticality: 5 },
    { criticality: 2.5 },
    { criticality: '3' },
  ];
  for (const change of broken) {
    assert.equal(isStoredRecord({ ...good, ...change }), false, JSON.stringify(change));
  }
  // Displayed-only fields are not its business: printing cleans them.
  assert.equal(isStoredRecord({ ...good, src_port: '\u001b[2J', threat: { a: 1 } }), true);
});

test('record shape: no JSON text and no value makes it throw', () => {
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
      const record = parseStoredRecord(text);
      assert.ok(record === null || isStoredRecord(record));
    }),
  );
  fc.assert(fc.property(fc.anything(), (value) => typeof isStoredRecord(value) === 'boolean'));
});

test('skipped records: the first is said at once, then one summary per interval, and the rest at flush', () => {
  const lines: { skipped: number; first: string; total: number }[] = [];
  const logger = pino({ level: 'warn' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  let now = 0;
  const skipped = createSkippedRecords(logger, { intervalMs: 60_000, now: () => now });
  skipped.note('a');
  for (let i = 0; i < 1000; i++) skipped.note(`b${i}`);
  assert.deepEqual(
    lines.map((l) => [l.skipped, l.first, l.total]),
    [[1, 'a', 1]],
  );
  now = 60_000;
  skipped.note('c');
  assert.deepEqual(lines.at(-1) && [lines.at(-1)?.skipped, lines.at(-1)?.first], [1001, 'b0']);
  skipped.note('d');
  skipped.flush();
  skipped.flush();
  assert.equal(lines.length, 3);
  assert.deepEqual([lines[2]?.skipped, lines[2]?.first, lines[2]?.total], [1, 'd', 1003]);
  assert.equal(skipped.count, 1003);
});
