// Review finding (cost, not correctness): every GET /api/feed reads the store backwards until it has 200
// records matching its filter, so a filter that matches little (a quiet sensor, "critical only") read the
// whole retained store, per tab, per filter change and per EventSource reconnect. The look-back is bounded by
// time (24 h) and bytes (64 MiB, docs/operations.md): here a store of a day two days ago and a little of today,
// and a feed whose filter matches nothing reads today's records and no more than the first chunk of the old day;
// then a day of records past the byte bound, of which such a feed reads no more than the bound.
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FEED_LOOKBACK_BYTES } from '../../src/admin/dashboard-routes.js';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { heldReads, openFeed, startAdmin } from '../helpers/admin-feed.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** `count` records spread over `spanMs` from `from`, into the segment of `day`; returns the bytes written. */
function writeDay(dataDir: string, day: number, from: number, spanMs: number, count: number): number {
  const fd = openSync(join(threatsDir(dataDir), `${utcDay(day)}-000001.ndjson`), 'a', 0o640);
  let bytes = 0;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = new Date(from + Math.floor((i * spanMs) / count)).toISOString();
    lines.push(
      JSON.stringify(
        storedGenericRecord({
          received_at: at,
          threat: `SSH brute force ${i}`,
          original: { source_ip: '203.0.113.5', destination_ip: '2001:db8::1', note: 'x'.repeat(100) },
        }),
      ),
    );
    if (lines.length === 5000 || i === count - 1) {
      const text = `${lines.join('\n')}\n`;
      writeSync(fd, text);
      bytes += Buffer.byteLength(text);
      lines.length = 0;
    }
  }
  closeSync(fd);
  return bytes;
}

test('admin /api/feed: a filter matching nothing reads back 24 hours, not the whole store', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  const now = Date.now();
  // The day before yesterday lies more than 24 h back whatever the time of day.
  const old = now - 2 * 86_400_000;
  const oldStart = Date.parse(`${new Date(old).toISOString().slice(0, 10)}T00:00:00Z`);
  const oldBytes = writeDay(dataDir, old, oldStart, 86_000_000, 50_000);
  const todayBytes = writeDay(dataDir, now, now - 3_600_000, 3_500_000, 500);
  const { s, ops } = heldReads();
  const { base } = await startAdmin(t, dataDir, ops);
  const feeds = await Promise.all(Array.from({ length: 4 }, () => openFeed(`${base}/api/feed?sensor=quiet`)));
  for (const feed of feeds) {
    assert.equal(feed.res.statusCode, 200);
    await feed.waitFor('event: ready');
    feed.req.destroy();
  }
  const report = `store: ${oldBytes} bytes two days back, ${todayBytes} today; 4 feeds read ${s.bytes} bytes`;
  t.diagnostic(report);
  // Each feed: today's segment (its end found, then read back whole) and the old day's end and newest chunk.
  assert.ok(s.bytes <= 4 * (todayBytes + 4 * 64 * 1024), report);
  assert.ok(oldBytes > 10 * 1024 * 1024, report);
});

test('admin /api/feed: a filter matching nothing reads back no more than 64 MiB within the 24 hours', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  const now = Date.now();
  const storeBytes = writeDay(dataDir, now, now - 23 * 3_600_000, 22 * 3_600_000, 160_000);
  const { s, ops } = heldReads();
  const { base } = await startAdmin(t, dataDir, ops);
  const feed = await openFeed(`${base}/api/feed?sensor=quiet`);
  await feed.waitFor('event: ready');
  feed.req.destroy();
  const report = `store: ${storeBytes} bytes in the last 23 hours; the feed read ${s.bytes} bytes`;
  t.diagnostic(report);
  assert.ok(storeBytes > FEED_LOOKBACK_BYTES + 8 * 1024 * 1024, report);
  // The bound, plus the segment's end found, the chunk that crossed it and a chunk of slack.
  assert.ok(s.bytes <= FEED_LOOKBACK_BYTES + 3 * 64 * 1024, report);
});
