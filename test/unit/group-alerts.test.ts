// Grouped alerts' pure parts: the headline a person reads, and the open groups' counts, which must add up to the
// records handed over whatever the batches, the windows and a crash between the state's write and the ack.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
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
