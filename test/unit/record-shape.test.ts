// The one shape check both backends apply to what they read back: what passes, what not (the whole record, per
// endpoint; exactly one JSON object a line), that no input (any JSON text, any value in any field) makes it or a
// reader after it throw, and that an output's feed decides as it does; the skip report's rate limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { feedRecord } from '../../src/admin/dashboard-routes.js';
import { formatRecordLine } from '../../src/cli/format-record.js';
import { GROUPABLE_FIELDS } from '../../src/config/outputs-schema.js';
import { cefMessage } from '../../src/outputs/receivers/cef-message.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { silenceRecord } from '../../src/sensors/silence-record.js';
import { outputLineOf } from '../../src/store/output-line.js';
import { recordMatcher } from '../../src/store/record-filter.js';
import { isStoredRecord, parseStoredRecord } from '../../src/store/record-shape.js';
import { createSkippedRecords } from '../../src/store/skipped-records.js';
import { firewallRecord, storedGenericRecord } from '../helpers/records.js';

/** One stored record of each endpoint, as the collector writes them (docs/records.md). */
function storedOfEach(): Record<string, unknown>[] {
  const generic = storedGenericRecord();
  const firewall = {
    ...storedGenericRecord({
      endpoint: 'firewall',
      criticality_source: 'severity',
      original: firewallRecord(),
    }),
    src_port: 51234,
    threat_id: '86708',
    detected_at: '2026-11-21T09:15:30.000Z',
    dedupe_key: 'Qm9vbGVhbnNBcmVGdW4xMg',
  };
  const syslog = {
    ...storedGenericRecord({ endpoint: 'syslog', format: 'cef', criticality_source: 'severity' }),
    original: '<134>1 2026-11-21T09:15:30Z fw1 - - - CEF:0|x|y|1|1|EICAR|7|src=203.0.113.5',
    truncated: true,
  };
  const other = { ...syslog, src_ip: '', dst_ip: '', dst_port: 0, other: true };
  // The collector's own record of a sensor gone silent, as the silence watcher makes it.
  const collector = silenceRecord(
    {
      kind: 'silent',
      sensor: 'fw1',
      silent_since: '2026-11-21T09:15:30.000Z',
      last_seen: '2026-11-21T08:15:30.000Z',
      expect_every_ms: 3_600_000,
      silent_for_ms: 5000,
      at: '2026-11-21T09:15:35.000Z',
    },
    Date.parse('2026-11-21T09:15:35.000Z'),
  ) as unknown as Record<string, unknown>;
  return [generic, firewall, syslog, other, collector];
}

test('record shape: a stored record of each endpoint passes, anything lacking what readers rely on does not', () => {
  const good = storedGenericRecord();
  for (const record of storedOfEach()) assert.equal(isStoredRecord(record), true, JSON.stringify(record));
  assert.deepEqual(parseStoredRecord(JSON.stringify(good)), good);
  for (const text of ['null', '5', '{}', '[]', '"x"', 'true', 'not json', '']) {
    assert.equal(parseStoredRecord(text), null, text);
  }
  const broken: Record<string, unknown>[] = [
    { id: 5 },
    { id: '' },
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
    { severity: undefined },
    { severity: 3 },
    { criticality_source: null },
    { src_ip: 1 },
    { dst_ip: undefined },
    { src_port: '\u001b[2J' },
    { src_port: 65536 },
    { dst_port: -1 },
    { dst_port: '22' },
    { dst_port: undefined },
    { protocol: undefined },
    { threat: { a: 1 } },
    { threat: undefined },
    { threat_id: 86708 },
    { detected_at: 0 },
    { remote_addr: [] },
    { repaired: false },
    { truncated: 'yes' },
    { other: 1 },
    { dedupe_key: 5 },
    { original: 'text' },
    { original: null },
    { original: [1] },
    { format: 'cef' },
  ];
  for (const change of broken) {
    assert.equal(isStoredRecord({ ...good, ...change }), false, JSON.stringify(change));
  }
  const syslog = storedOfEach()[2] as Record<string, unknown>;
  for (const change of [{ format: undefined }, { format: 5 }, { original: { a: 1 } }]) {
    assert.equal(isStoredRecord({ ...syslog, ...change }), false, `syslog ${JSON.stringify(change)}`);
  }
  // What a head-only record (id, received_at, sensor, endpoint, criticality) is: not a record.
  const { id, received_at, sensor, endpoint, criticality } = good;
  assert.equal(isStoredRecord({ id, received_at, sensor, endpoint, criticality }), false);
  // What the strings say is not its business: printing cleans them, receivers escape them.
  assert.equal(isStoredRecord({ ...good, threat: '\u001b[2J\n|=', protocol: '' }), true);
  // Exactly one JSON text: a second object after the first, however joined, refuses the line.
  for (const glue of ['', ',', '\n', ' ']) {
    assert.equal(parseStoredRecord(`${JSON.stringify(good)}${glue}${JSON.stringify(good)}`), null, glue);
  }
});

/** Every field of a stored record (the list `group.by` may name, and `original`), and one no record has. */
const FIELDS = [...GROUPABLE_FIELDS, 'original', 'extra'];

/** A stored record of some endpoint with one field set to any JSON value, or removed. */
const mutated = fc
  .tuple(
    fc.integer({ min: 0, max: 4 }),
    fc.constantFrom(...FIELDS),
    fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
  )
  .map(([which, field, value]) => {
    const record = { ...(storedOfEach()[which] as Record<string, unknown>) };
    if (value === undefined) delete record[field];
    else record[field] = value;
    return JSON.stringify(record);
  });

/** Every reader of a record: its CEF line, the filters of the look-up and the feed, the CLI's line, the feed's. */
function readAll(record: StoredRecord): void {
  assert.equal(typeof cefMessage(record, record.id, '1.0'), 'string');
  const filter = {
    threat: 'ssh',
    src: '203.0.113.0/24',
    dst: '2001:db8::/32',
    since: 0,
    until: Date.now() + 1e9,
    minCriticality: 0,
    sensor: 'fw1',
    endpoint: 'generic' as const,
    before: 'z',
  };
  assert.equal(typeof recordMatcher(filter)(record), 'boolean');
  assert.equal(typeof formatRecordLine(record, true), 'string');
  assert.equal(typeof JSON.stringify(feedRecord(record)), 'string');
}

test('property: for any JSON value in any field, the check never throws; every reader gets a whole record or nothing', () => {
  fc.assert(
    fc.property(mutated, (text) => {
      const record = parseStoredRecord(text);
      assert.ok(record === null || isStoredRecord(record));
      // An output's feed decides the same whichever way it checks, and hands over only what the check passed.
      const buf = Buffer.from(text, 'utf8');
      const byHead = outputLineOf(buf, 0, buf.length, 'head');
      const whole = outputLineOf(buf, 0, buf.length, 'record');
      assert.equal(byHead === null, record === null, text);
      assert.equal(whole === null, record === null, text);
      if (record === null) return;
      assert.deepEqual(byHead?.record, record);
      readAll(record);
    }),
    { numRuns: 3000 },
  );
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string()), (text) => {
      const record = parseStoredRecord(text);
      assert.ok(record === null || isStoredRecord(record));
    }),
  );
  fc.assert(fc.property(fc.anything(), (value) => typeof isStoredRecord(value) === 'boolean'));
  // CEF and the filters are total over any object, not only over what the check passes; a parsed object may
  // carry a `toString` or `valueOf` that is not a function (String() and Math.trunc() throw on those).
  const uncallable = fc.dictionary(
    fc.constantFrom('toString', 'valueOf', 'length', '0'),
    fc.jsonValue({ maxDepth: 1 }),
  );
  const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), uncallable);
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom(...FIELDS), value), (record) => {
      readAll(record as unknown as StoredRecord);
    }),
    {
      numRuns: 1000,
      examples: [
        [{ id: { toString: 0 } }],
        [{ protocol: { toString: '' } }],
        [{ criticality: { valueOf: 1 } }],
        [{ src_ip: { toString: null }, src_port: { valueOf: [] } }],
      ],
    },
  );
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
