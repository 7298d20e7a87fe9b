// Review finding F5 (issue 27): a dashboard feed's first read went on after its client hung up, and any number
// ran at once. Against the real admin listener on a real store whose reads pass through counting FileOps:
// a dropped feed stops reading, two first reads run at once, eight wait, the next feed gets 503 DASHBOARD_BUSY.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { FEED_READS_AT_ONCE, FEED_READS_WAITING } from '../../src/admin/dashboard-routes.js';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { type Feed, heldReads, openFeed, startAdmin } from '../helpers/admin-feed.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

/** Records of the last hour (the feed's look-back is 24 h): every one read by a filter that matches none. */
function writeStore(dataDir: string, count: number): number {
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  const now = Date.now();
  const fd = openSync(join(threatsDir(dataDir), `${utcDay(now)}-000001.ndjson`), 'a', 0o640);
  let bytes = 0;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = new Date(now - 3_600_000 + Math.floor((i * 3_500_000) / count)).toISOString();
    lines.push(JSON.stringify(storedGenericRecord({ received_at: at, threat: `SSH brute force ${i}` })));
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

test('admin /api/feed: a feed whose client hangs up stops reading the store within a read', async (t) => {
  const dataDir = makeTempDir(t);
  const storeBytes = writeStore(dataDir, 20_000);
  const { s, ops } = heldReads();
  const { base, serverSockets } = await startAdmin(t, dataDir, ops);
  s.hold();
  const feed = await openFeed(`${base}/api/feed?sensor=nosuch`);
  assert.equal(feed.res.statusCode, 200);
  await until(() => s.blocked === 1, 20_000, 'the first read');
  const serverSide = serverSockets[0] as Socket;
  const closed = once(serverSide, 'close');
  feed.req.destroy();
  await closed;
  await new Promise((resolve) => setImmediate(resolve));
  const before = s.bytes;
  s.release();
  await until(() => s.openFds === 0, 20_000, 'the read to end');
  const after = s.bytes - before;
  t.diagnostic(`store ${storeBytes} bytes; read after the hang-up: ${after} bytes, in all ${s.bytes}`);
  assert.ok(storeBytes > 8 * 1024 * 1024, `store of ${storeBytes} bytes`);
  assert.ok(after <= 128 * 1024, `${after} bytes read after the client hung up`);
});

test('admin /api/feed: two first reads at once, eight more wait (a leaver gives up its place), the next gets 503 DASHBOARD_BUSY', async (t) => {
  const dataDir = makeTempDir(t);
  writeStore(dataDir, 2000);
  const { s, ops } = heldReads();
  const { base, serverSockets } = await startAdmin(t, dataDir, ops);
  s.hold();
  const feeds: Feed[] = [];
  for (let i = 0; i < FEED_READS_AT_ONCE; i++)
    feeds.push(await openFeed(`${base}/api/feed?sensor=nosuch${i}`));
  await until(() => s.blocked === FEED_READS_AT_ONCE, 20_000, 'the first reads');
  for (let i = 0; i < FEED_READS_WAITING; i++) {
    const feed = await openFeed(`${base}/api/feed?sensor=waiting${i}`);
    await feed.waitFor(': queued');
    feeds.push(feed);
  }
  assert.equal(s.openFds, FEED_READS_AT_ONCE, 'reads started past the bound');
  const refused = await openFeed(`${base}/api/feed`);
  assert.equal(refused.res.statusCode, 503);
  assert.equal(refused.res.headers['retry-after'], '5');
  await once(refused.res, 'end');
  assert.equal((JSON.parse(refused.text()) as { error: { code: string } }).error.code, 'DASHBOARD_BUSY');
  // A feed that leaves while waiting gives its place to the next one.
  const leaving = feeds.splice(FEED_READS_AT_ONCE, 1)[0] as Feed;
  const port = leaving.req.socket?.localPort;
  const serverSide = serverSockets.find((socket) => socket.remotePort === port) as Socket;
  const closed = once(serverSide, 'close');
  leaving.req.destroy();
  await closed;
  const next = await openFeed(`${base}/api/feed?sensor=next`);
  assert.equal(next.res.statusCode, 200);
  await next.waitFor(': queued');
  feeds.push(next);
  s.release();
  for (const feed of feeds) await feed.waitFor('event: ready');
  assert.equal(s.maxOpenFds, FEED_READS_AT_ONCE, 'most reads open at once');
  for (const feed of feeds) feed.req.destroy();
});
