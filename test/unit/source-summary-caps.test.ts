// `source show`'s sums hold a bounded number of distinct destinations and threats whatever the records read
// (a look-up over a million records of as many threats held them all): past MAX_DISTINCT it says `capped`.
import assert from 'node:assert/strict';
import test from 'node:test';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { MAX_DISTINCT, summarizeSource } from '../../src/store/source-summary.js';
import type { ReadRecentOptions, RecordReader } from '../../src/store/store.js';
import { record } from '../store/contract.js';

/** The records given, handed to the look-up's `match` newest first, as a backend reads them. */
function readerOf(records: StoredRecord[]): RecordReader {
  return {
    skippedCount: () => 0,
    async readRecent(options: ReadRecentOptions) {
      for (let i = records.length - 1; i >= 0; i--) options.match?.(records[i] as StoredRecord);
      return { records: [], cursor: { backend: 'memory' } };
    },
  } as unknown as RecordReader;
}

test('past MAX_DISTINCT destinations or threats the sums stop growing and say so; a long threat counts by its first 256 characters', async () => {
  const now = Date.now();
  const at = new Date(now - 60_000).toISOString();
  const records = Array.from({ length: MAX_DISTINCT + 10 }, (_, i) =>
    record({ src_ip: '203.0.113.7', received_at: at, dst_ip: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` }),
  );
  const long = 'y'.repeat(300);
  records.push(record({ src_ip: '203.0.113.7', received_at: at, threat: `${long}a` }));
  records.push(record({ src_ip: '203.0.113.7', received_at: at, threat: `${long}b` }));
  const summary = await summarizeSource(readerOf(records), {
    address: '203.0.113.7',
    since: now - 3_600_000,
  });
  assert.equal(summary.records, records.length, 'every record counted');
  assert.equal(summary.targets, MAX_DISTINCT);
  assert.equal(summary.capped, true);
  const cut = summary.threats.find((x) => x.threat.startsWith('yyy'));
  assert.deepEqual(cut, { threat: 'y'.repeat(256), count: 2 });

  const few = await summarizeSource(readerOf(records.slice(0, 5)), {
    address: '203.0.113.7',
    since: now - 3_600_000,
  });
  assert.equal(few.capped, false);
});
