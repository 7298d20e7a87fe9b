// The dashboard's look-up, GET /api/search, against the real admin listener on a real files store: answers by
// CIDR and threat, pages, refuses a bad address with 400, shares the feed's read slots (503 DASHBOARD_BUSY past
// them) and stops reading when its client hangs up.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { FEED_READS_AT_ONCE, FEED_READS_WAITING } from '../../src/admin/dashboard-routes.js';
import { newRecordId } from '../../src/records/record-id.js';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { type Feed, heldReads, openFeed, startAdmin } from '../helpers/admin-feed.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const SOURCES = ['192.0.2.10', '2001:db8::5', '198.51.100.1', '192.0.2.250'];

/** `count` records over the last hour, oldest first, sources in turn; their ids and bytes. */
function writeStore(
  dataDir: string,
  count: number,
  fields: (i: number) => Record<string, unknown> = () => ({}),
): { ids: string[]; bytes: number } {
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  const now = Date.now();
  const fd = openSync(join(threatsDir(dataDir), `${utcDay(now)}-000001.ndjson`), 'a', 0o640);
  const ids: string[] = [];
  let bytes = 0;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = now - 3_600_000 + Math.floor((i * 3_500_000) / count);
    const id = newRecordId(at);
    ids.push(id);
    const threat = i % 3 === 0 ? `EICAR test ${i}` : `SSH brute force ${i}`;
    const src_ip = SOURCES[i % SOURCES.length];
    lines.push(
      JSON.stringify(
        storedGenericRecord({ id, received_at: new Date(at).toISOString(), threat, src_ip, ...fields(i) }),
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
  return { ids, bytes };
}

interface Answer {
  status: number;
  body: {
    records: { id: string; src_ip: string; threat: string }[];
    next: string | null;
    error?: { code: string };
  };
}

/** A GET whose answer may come much later (a held read): the request at once, the answer as a promise. */
function startGet(url: string) {
  const req = request(url, { agent: false });
  req.on('error', () => {});
  req.end();
  const answer = (async (): Promise<Answer> => {
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let text = '';
    for await (const chunk of res.setEncoding('utf8')) text += chunk;
    return { status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] };
  })();
  answer.catch(() => {});
  return { req, answer };
}

test('admin /api/search: records by CIDR and threat, newest first, paged with next; 400 for what is not an address', async (t) => {
  const dataDir = makeTempDir(t);
  const { ids } = writeStore(dataDir, 40);
  const { s, ops } = heldReads();
  const { base } = await startAdmin(t, dataDir, ops);
  const v4 = ids.filter((_, i) => i % 4 === 0 || i % 4 === 3).reverse();
  const all = await startGet(`${base}/api/search?src=192.0.2.0%2F24&since=2h&limit=200`).answer;
  assert.equal(all.status, 200);
  assert.deepEqual(
    all.body.records.map((r) => r.id),
    v4,
  );
  assert.equal(all.body.next, null);
  const paged: string[] = [];
  let next: string | null = null;
  do {
    const page: Answer = await startGet(
      `${base}/api/search?src=192.0.2.0/24&limit=6${next ? `&before=${next}` : ''}`,
    ).answer;
    assert.equal(page.status, 200);
    paged.push(...page.body.records.map((r) => r.id));
    next = page.body.next;
  } while (next !== null && paged.length < 100);
  assert.deepEqual(paged, v4);
  const v6 = await startGet(`${base}/api/search?src=2001:db8::/32&threat=eicar`).answer;
  assert.deepEqual(
    v6.body.records.map((r) => r.id),
    ids.filter((_, i) => i % 4 === 1 && i % 3 === 0).reverse(),
  );
  for (const query of ['src=192.0.2.300', 'dst=2001:db8::/129', 'since=40d', 'since=soon', 'limit=0']) {
    const bad = await startGet(`${base}/api/search?${query}`).answer;
    assert.equal(bad.status, 400, query);
    assert.equal(bad.body.error?.code, 'BAD_REQUEST', query);
  }
  assert.ok(s.bytes > 0);
});

test('admin /api/search: a look-up whose client hangs up stops reading the store within a read', async (t) => {
  const dataDir = makeTempDir(t);
  const { bytes: storeBytes } = writeStore(dataDir, 20_000);
  const { s, ops } = heldReads();
  const { base, serverSockets } = await startAdmin(t, dataDir, ops);
  s.hold();
  const search = startGet(`${base}/api/search?threat=nothing-matches&since=2h`);
  await until(() => s.blocked === 1, 20_000, 'the read');
  const serverSide = serverSockets[0] as Socket;
  const closed = once(serverSide, 'close');
  search.req.destroy();
  await closed;
  await new Promise((resolve) => setImmediate(resolve));
  const before = s.bytes;
  s.release();
  await until(() => s.openFds === 0, 20_000, 'the read to end');
  const after = s.bytes - before;
  t.diagnostic(`store ${storeBytes} bytes; read after the hang-up: ${after} bytes`);
  assert.ok(storeBytes > 8 * 1024 * 1024, `store of ${storeBytes} bytes`);
  assert.ok(after <= 128 * 1024, `${after} bytes read after the client hung up`);
});

test("admin /api/search: look-ups share the feeds' read slots: two reads at once, eight waiting, then 503 DASHBOARD_BUSY", async (t) => {
  const dataDir = makeTempDir(t);
  writeStore(dataDir, 2000);
  const { s, ops } = heldReads();
  const { base, serverSockets } = await startAdmin(t, dataDir, ops);
  s.hold();
  const feeds: Feed[] = [];
  for (let i = 0; i < FEED_READS_AT_ONCE; i++)
    feeds.push(await openFeed(`${base}/api/feed?sensor=nosuch${i}`));
  await until(() => s.blocked === FEED_READS_AT_ONCE, 20_000, 'the feeds’ first reads');
  const searches = Array.from({ length: FEED_READS_WAITING }, (_, i) =>
    startGet(`${base}/api/search?sensor=waiting${i}`),
  );
  // The queued look-ups hold their places before the next one asks: a request's place is taken in the tick
  // its bytes arrive.
  const arrived = FEED_READS_AT_ONCE + FEED_READS_WAITING;
  await until(
    () => serverSockets.filter((socket) => socket.bytesRead > 0).length === arrived,
    20_000,
    'the look-ups',
  );
  await new Promise((resolve) => setImmediate(resolve));
  const refused = await startGet(`${base}/api/search?src=192.0.2.10`).answer;
  assert.equal(refused.status, 503);
  assert.equal(refused.body.error?.code, 'DASHBOARD_BUSY');
  assert.equal(s.openFds, FEED_READS_AT_ONCE, 'reads started past the bound');
  s.release();
  for (const search of searches) assert.equal((await search.answer).status, 200);
  assert.equal(s.maxOpenFds, FEED_READS_AT_ONCE, 'most reads open at once');
  for (const feed of feeds) feed.req.destroy();
});

test('admin /api/search and /api/feed: endpoint=syslog keeps only the records the syslog input stored', async (t) => {
  const dataDir = makeTempDir(t);
  const isSyslog = (i: number) => i % 3 === 1;
  const { ids } = writeStore(dataDir, 30, (i) =>
    isSyslog(i) ? { endpoint: 'syslog', format: 'cef', original: 'CEF:0|x|y|1|1|t|5|' } : {},
  );
  const { ops } = heldReads();
  const { base } = await startAdmin(t, dataDir, ops);
  const found = await startGet(`${base}/api/search?endpoint=syslog&since=2h&limit=200`).answer;
  assert.equal(found.status, 200);
  const syslogIds = ids.filter((_, i) => isSyslog(i));
  assert.deepEqual(
    found.body.records.map((r) => r.id),
    [...syslogIds].reverse(),
  );
  const feed = await openFeed(`${base}/api/feed?endpoint=syslog`);
  t.after(() => feed.req.destroy());
  await feed.waitFor(syslogIds[0] as string);
  for (const [i, id] of ids.entries()) assert.equal(feed.text().includes(id), isSyslog(i), id);
});

test('admin /api/search: by source and destination country and AS (the CLI’s filter), 400 for what is neither', async (t) => {
  const dataDir = makeTempDir(t);
  const places = [
    { src_country: 'US', src_asn: 15169, src_as_org: 'GOOGLE' },
    { src_country: 'NL', src_asn: 64500, src_as_org: 'Example Hosting', dst_country: 'DE', dst_asn: 3320 },
    { src_country: 'US', src_asn: 64500, src_as_org: 'Example Hosting' },
    {},
  ];
  const { ids } = writeStore(dataDir, 40, (i) => places[i % places.length] as Record<string, unknown>);
  const { ops } = heldReads();
  const { base } = await startAdmin(t, dataDir, ops);
  const idsWhere = (test: (place: Record<string, unknown>) => boolean) =>
    ids.filter((_, i) => test(places[i % places.length] as Record<string, unknown>)).reverse();
  for (const [query, want] of [
    ['src_country=us', idsWhere((p) => p.src_country === 'US')],
    ['src_asn=AS64500', idsWhere((p) => p.src_asn === 64500)],
    ['src_country=US&src_asn=64500', idsWhere((p) => p.src_country === 'US' && p.src_asn === 64500)],
    ['dst_country=DE&dst_asn=3320', idsWhere((p) => p.dst_country === 'DE')],
    ['src_country=FR', []],
    ['src_country=&src_asn=', ids.slice().reverse()],
  ] as const) {
    const found = await startGet(`${base}/api/search?${query}&since=2h&limit=200`).answer;
    assert.equal(found.status, 200, query);
    assert.deepEqual(
      found.body.records.map((r) => r.id),
      want,
      query,
    );
  }
  // The answer's records carry the enrichment's fields, for the page to show and filter by.
  const one = await startGet(`${base}/api/search?src_country=NL&limit=1&since=2h`).answer;
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(one.body.records[0] as Record<string, unknown>).filter(([key]) =>
        /_(country|asn|as_org)$/.test(key),
      ),
    ),
    places[1],
  );
  for (const query of [
    'src_country=USA',
    'dst_country=1x',
    'src_asn=google',
    'dst_asn=4294967296',
    'src_asn=AS',
  ]) {
    const bad = await startGet(`${base}/api/search?${query}`).answer;
    assert.equal(bad.status, 400, query);
    assert.equal(bad.body.error?.code, 'BAD_REQUEST', query);
  }
});

test('admin /api/feed and /api/histogram: the view filters by source and destination country and AS', async (t) => {
  const dataDir = makeTempDir(t);
  const places = [
    { src_country: 'NL', src_asn: 64500 },
    { src_country: 'US', src_asn: 15169, dst_country: 'DE', dst_asn: 3320 },
    {},
  ];
  const { ids } = writeStore(dataDir, 30, (i) => places[i % places.length] as Record<string, unknown>);
  const { ops } = heldReads();
  const { base } = await startAdmin(t, dataDir, ops);
  for (const [query, place] of [
    ['src_country=nl', 0],
    ['src_asn=AS15169&dst_country=DE', 1],
    ['dst_asn=3320', 1],
  ] as const) {
    const want = ids.filter((_, i) => i % places.length === place);
    const feed = await openFeed(`${base}/api/feed?${query}`);
    t.after(() => feed.req.destroy());
    await feed.waitFor(want.at(-1) as string);
    for (const id of ids) assert.equal(feed.text().includes(id), want.includes(id), `${query}: ${id}`);
    // The histogram of the same view counts the same records, once it has counted the store.
    let total = -1;
    await until(
      async () => {
        const res = await fetch(`${base}/api/histogram?${query}`);
        const h = (await res.json()) as { complete: boolean; buckets: number[][] };
        total = h.buckets.flat().reduce((a, n) => a + n, 0);
        return h.complete;
      },
      20_000,
      `the histogram of ${query}`,
    );
    assert.equal(total, want.length, query);
  }
});
