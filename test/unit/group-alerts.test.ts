// Grouped alerts' pure parts: the headline a person reads, and the open groups' counts, which must add up to the
// records handed over whatever the batches, the windows and a crash between the state's write and the ack.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { BATCH_MAX_RECORDS } from '../../src/config/outputs-schema.js';
import { type GroupConfig, openGrouper } from '../../src/outputs/grouping.js';
import { summaryHeadline } from '../../src/outputs/receivers/group-text.js';
import type { GroupSummary, OutgoingRecord } from '../../src/outputs/receivers/receiver.js';
import { oneLine } from '../../src/outputs/receivers/record-text.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const summary = (group: Record<string, unknown> | null, count = 340): GroupSummary => ({
  key: 'k',
  group,
  count,
  firstAt: '2026-11-28T11:02:14.112Z',
  lastAt: '2026-11-28T11:11:58.640Z',
  sensors: ['fw1', 'fw2', 'fw3'],
  moreSensors: false,
  samples: [],
  window: '10m',
});

test('the headline says the group in words: its values, the count, sensors and window', () => {
  const headline = (group: Record<string, unknown> | null) =>
    summaryHeadline(summary(group), (v) => oneLine(v));
  assert.equal(
    headline({ src_ip: '203.0.113.5', threat: 'SSH brute force' }),
    '203.0.113.5 — SSH brute force ×340 on 3 sensors in 10 min',
  );
  // A record without the field (no enrichment for a private source) is grouped under null: said as such.
  assert.equal(
    headline({ src_country: null, threat: 'Port Scan' }),
    'no src_country — Port Scan ×340 on 3 sensors in 10 min',
  );
  // An AS number reads as one, as `threats stats --by src_asn` prints it.
  assert.equal(headline({ src_asn: 15169, dst_asn: 64500 }), 'AS15169 — AS64500 ×340 on 3 sensors in 10 min');
  assert.equal(
    headline(null),
    'records of further groups (past group.maxGroups) ×340 on 3 sensors in 10 min',
  );
});

const config = (maxGroups: number): GroupConfig => ({
  by: ['src_ip'],
  window: '10s',
  windowMs: 10_000,
  maxGroups,
  samples: 2,
});

const outgoing = (src: string): OutgoingRecord => {
  const record = storedGenericRecord({ src_ip: src }) as unknown as StoredRecord;
  return { id: record.id, line: JSON.stringify(record), head: record, record };
};

test('firsts plus summaries count every record once: any batches, windows, caps, and a crash before the ack', () => {
  const dir = makeTempDir();
  let run = 0;
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          sources: fc.array(fc.constantFrom('192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'), {
            minLength: 1,
            maxLength: 20,
          }),
          // Time passed before the batch: within a window, past one, or past two.
          advance: fc.constantFrom(0, 3_000, 10_000, 25_000),
          // The process dies after the state's write and before the ack: the batch is handed over again.
          crash: fc.boolean(),
        }),
        { minLength: 1, maxLength: 12 },
      ),
      fc.integer({ min: 1, max: 5 }),
      (batches, maxGroups) => {
        const path = join(dir, `hook-${run++}.groups.json`);
        let grouper = openGrouper(config(maxGroups), path, null);
        let now = 1_000_000;
        let sent = 0;
        let handed = 0;
        const flush = () => {
          for (const s of grouper.due(now)) {
            sent += s.count;
            grouper.settle(s, now);
          }
          grouper.closeQuiet(now);
          grouper.save();
        };
        for (const batch of batches) {
          now += batch.advance;
          flush();
          const records = batch.sources.map(outgoing);
          handed += records.length;
          sent += grouper.absorb(records, now).length;
          grouper.save();
          if (batch.crash) {
            grouper = openGrouper(config(maxGroups), path, null);
            flush();
            sent += grouper.absorb(records, now).length;
            grouper.save();
          }
        }
        now += 100_000;
        flush();
        assert.equal(sent, handed);
        assert.equal(grouper.nextEnd() === null || grouper.due(now).length === 0, true);
      },
    ),
    { numRuns: 50 },
  );
});

/** Everything a grouper sent: its firsts, and the counts of the summaries due by `at` (settled). */
function sentBy(
  grouper: ReturnType<typeof openGrouper>,
  at: number,
  firsts: number,
): { firsts: number; counted: number } {
  let counted = 0;
  for (const s of grouper.due(at)) {
    counted += s.count;
    grouper.settle(s, at);
  }
  return { firsts, counted };
}

test('a batch counted and not acked, handed over again behind newer records (NATS after a crash, a failed ack), is not counted twice', () => {
  const path = join(makeTempDir(), 'out.groups.json');
  const t0 = 1_000_000;
  const a = ['203.0.113.5', '203.0.113.5', '203.0.113.5', '203.0.113.5'].map(outgoing);
  const before = openGrouper(config(100), path, null);
  const firstsA = before.absorb(a, t0).length;
  before.save(); // then killed before the ack
  const after = openGrouper(config(100), path, null);
  const newer = [outgoing('203.0.113.5')];
  const firstsB = after.absorb(newer, t0 + 1000).length;
  after.save();
  after.acked(newer);
  const firstsA2 = after.absorb(a, t0 + 31_000).length; // redelivered after ack_wait
  after.acked(a);
  const sent = sentBy(after, t0 + 60_000, firstsA + firstsB + firstsA2);
  assert.equal(sent.firsts + sent.counted, 5, 'four records and the newer one, each once');

  // In one process: the ack failed, the batch came back after a newer one.
  const live = openGrouper(config(100), join(makeTempDir(), 'live.groups.json'), null);
  const b = ['198.51.100.1', '198.51.100.1'].map(outgoing);
  let firsts = live.absorb(b, t0).length;
  const c = [outgoing('198.51.100.1')];
  firsts += live.absorb(c, t0 + 10).length;
  live.acked(c);
  firsts += live.absorb(b, t0 + 20).length;
  live.acked(b);
  const total = sentBy(live, t0 + 60_000, firsts);
  assert.equal(total.firsts + total.counted, 3);
});

test('windows: a clock set back does not stall a group; first_at and last_at are the earliest and latest, whatever the order', () => {
  const grouper = openGrouper(config(100), join(makeTempDir(), 'clock.groups.json'), null);
  const year = 365 * 24 * 3_600_000;
  const late = outgoing('192.0.2.9');
  const early = outgoing('192.0.2.9');
  (late.record as unknown as Record<string, unknown>).received_at = '2026-11-28T11:00:09.000Z';
  (early.record as unknown as Record<string, unknown>).received_at = '2026-11-28T11:00:01.000Z';
  // Opened while the clock was a year fast; then set right.
  grouper.absorb([outgoing('192.0.2.9')], 5 * year);
  grouper.absorb([late, early], year);
  // The first look after the clock was set back ends the window one window later at most, not four years on.
  assert.equal(grouper.due(year + 10_000).length, 0);
  const due = grouper.due(year + 20_000);
  assert.equal(due.length, 1, 'due within a window of the clock set back');
  assert.equal(due[0]?.firstAt, '2026-11-28T11:00:01.000Z');
  assert.equal(due[0]?.lastAt, '2026-11-28T11:00:09.000Z');
});

test('keys: a long value is held as a digest and shown cut; an inherited name is no value; a damaged state is said and moved aside', () => {
  const dir = makeTempDir();
  const grouper = openGrouper(
    { ...config(100), by: ['threat', 'constructor'] },
    join(dir, 'k.groups.json'),
    null,
  );
  const long = 'x'.repeat(16_000);
  const record = outgoing('192.0.2.1');
  (record.record as unknown as Record<string, unknown>).threat = long;
  grouper.absorb([record, outgoing('192.0.2.1')], 0);
  grouper.absorb([{ ...record, id: `${record.id}-2` }], 1);
  grouper.save();
  const state = JSON.parse(readFileSync(join(dir, 'k.groups.json'), 'utf8')) as {
    groups: { key: string; group: Record<string, unknown> }[];
  };
  const held = state.groups.find((g) => String(g.group.threat).startsWith('xxx'));
  assert.ok(held, 'the long group is open');
  assert.ok(held.key.length < 100, `its key: ${held.key.length} characters`);
  assert.equal(String(held.group.threat).length, 257, 'its value shown cut to 256 characters and …');
  assert.equal(held.group.constructor, null);

  writeFileSync(join(dir, 'bad.groups.json'), '{"v":1,"groups":');
  const warned: string[] = [];
  const fresh = openGrouper(config(100), join(dir, 'bad.groups.json'), null, (m) => warned.push(m));
  assert.equal(fresh.nextEnd(), null);
  assert.equal(warned.length, 1);
  assert.match(
    warned[0] as string,
    /cannot be read .*counts are lost; moved to .*bad\.groups\.json\.damaged-\d+/,
  );
  assert.ok(readdirSync(dir).some((f) => f.startsWith('bad.groups.json.damaged-')));
});

test('the ids counted and not acked are kept a day from each start, and a batch larger than their bound keeps its own', () => {
  const dir = makeTempDir();
  const day = 24 * 3_600_000;
  // Counted three days ago, then the collector died before the ack and stayed down.
  const path = join(dir, 'down.groups.json');
  const batch = ['192.0.2.3', '192.0.2.3', '192.0.2.3'].map(outgoing);
  const before = openGrouper(config(100), path, null);
  let sent = before.absorb(batch, Date.now() - 3 * day).length;
  before.save();
  const after = openGrouper(config(100), path, null);
  sent += after.absorb(batch, Date.now()).length;
  after.acked(batch);
  const total = sentBy(after, Date.now() + 60_000, sent);
  assert.equal(total.firsts + total.counted, 3, 'not counted again after days down');

  // 60,000 records in one batch (group outputs may have batch.maxRecords 100,000), handed over again.
  const big = Array.from({ length: 60_000 }, () => outgoing('198.51.100.3'));
  const first = openGrouper(config(100), join(dir, 'big.groups.json'), null);
  let n = first.absorb(big, Date.now()).length;
  first.save();
  const again = openGrouper(config(100), join(dir, 'big.groups.json'), null);
  n += again.absorb(big, Date.now()).length;
  const sums = sentBy(again, Date.now() + 60_000, n);
  assert.equal(sums.firsts + sums.counted, 60_000);

  // A group of a state file that is not one: the file is set aside, never thrown on.
  writeFileSync(join(dir, 'odd.groups.json'), '{"v":1,"groups":[{"key":"x"}]}');
  const warned: string[] = [];
  const odd = openGrouper(config(100), join(dir, 'odd.groups.json'), null, (m) => warned.push(m));
  assert.equal(odd.nextEnd(), null);
  assert.match(warned[0] ?? '', /a group of it is not one/);
});

test('a batch as large as allowed, not acked at a crash, comes back after a newer batch as large (NATS): counted once', () => {
  const path = join(makeTempDir(), 'large.groups.json');
  const t0 = Date.now();
  const many = (src: string) => Array.from({ length: BATCH_MAX_RECORDS }, () => outgoing(src));
  const inFlight = many('198.51.100.7');
  const before = openGrouper(config(100), path, null);
  let firsts = before.absorb(inFlight, t0).length;
  before.save(); // then killed before the ack
  const after = openGrouper(config(100), path, null);
  const newer = many('198.51.100.7');
  firsts += after.absorb(newer, t0 + 1000).length;
  after.save();
  after.acked(newer);
  firsts += after.absorb(inFlight, t0 + 31_000).length; // redelivered after ack_wait, behind the newer batch
  after.acked(inFlight);
  const sent = sentBy(after, t0 + 60_000, firsts);
  assert.equal(sent.firsts + sent.counted, 2 * BATCH_MAX_RECORDS, 'each record once');
});
