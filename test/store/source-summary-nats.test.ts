// Black box on a real nats-server: `source show`'s sums under the look-up's byte bound. The NATS reader reads
// windows of the stream, each oldest first; a window the bound cuts short is given up, and so must its records
// be from the sums: what is counted is the newest records, with no gap (docs/cli.md, "the newest records").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { openStore } from '../../src/store/open-store.js';
import { summarizeSource } from '../../src/store/source-summary.js';
import { natsBackend } from '../helpers/nats-server.js';
import { record } from './contract.js';

test('nats: a source summary cut by its byte bound counts the newest records whole, not part of an older window', async (t) => {
  const { dataDir, config } = await natsBackend(t);
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  t.after(() => store.close());
  const base = Date.now() - 3_600_000;
  // 600 records of one source a second apart: the oldest 88 large (4 KB), the newest 512 small. The reader's
  // first window is the newest 512; sized from their average, the next is far too large for what the bound
  // leaves, and is cut.
  const records = Array.from({ length: 600 }, (_, i) =>
    record({
      src_ip: '203.0.113.7',
      received_at: new Date(base + i * 1000).toISOString(),
      threat: i < 88 ? `old ${'x'.repeat(4000)}` : `new ${i}`,
    }),
  );
  const log = await store.openRecordLog();
  await log.append(records);
  await log.close();

  const summary = await summarizeSource(
    store.reader,
    { address: '203.0.113.7', since: base - 1000 },
    { maxBytes: 512 * 700 },
  );
  assert.ok(summary.bounded, 'the bound ended the read');
  // Whatever was counted is a run of the newest: its count says which, its first_seen must be the oldest of them.
  const counted = records.slice(records.length - summary.records);
  assert.equal(summary.first_seen, counted[0]?.received_at, `${summary.records} counted`);
  assert.equal(summary.last_seen, records.at(-1)?.received_at);
  const threats = new Set(summary.threats.map((x) => x.threat));
  assert.ok(![...threats].some((x) => x.startsWith('old') && !counted.some((r) => r.threat === x)));
});
