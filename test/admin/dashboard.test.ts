/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The dashboard in a real headless Chromium (Debian's, via playwright-core; never a download): records
// POSTed on the sensors' port appear in the live feed, filters apply, the sensor table shows a rejection,
// and a threat named <script> is shown as text (picture: test/output/dashboard-feed.png). The second test:
// the histogram's bars against records posted into known 10-minute buckets, click to filter, the URL round
// trip and a look-up by CIDR; its picture, test/output/dashboard.png, is docs/dashboard.png (README, operations.md).
// The third: the Blocklist panel shows a block made by a record posted over real TLS, its address is marked in
// the feed, the top sources and a look-up, a feed's last fetch shows, and a reason that is markup is text
// (picture: test/output/dashboard-blocklist.png). The fourth: the top source countries and networks of records
// enriched by the shipped databases, and a country or network clicked (there, or in a source's view) opening the
// look-up of its records. The fifth: the endpoint filter offers every endpoint, `collector` (the collector's own
// records of a silent sensor) among them, and selecting it shows only those. The sixth: a page of 600 addresses
// asks the blocklist about no more than the server takes, and a failing blocklist leaves the other panels updating.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { chromium } from 'playwright-core';
import { request } from 'undici';
import { hashKey } from '../../src/keys.js';
import { RECORD_ENDPOINTS } from '../../src/records/stored-record.js';
import type { DecisionChange } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';

const OUTPUT = fileURLToPath(new URL('../output/', import.meta.url));
const SCRIPT_NAME = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">';
/** A hang guard for what chromium does: on a busy box a page renders in seconds, not the milliseconds of a quiet one. */
const UI_MS = 60_000;

test('dashboard: live feed within a second, filters, sensor table, escaping, screenshot', {
  timeout: 60_000,
}, async (t) => {
  const s = await startTestServer(t, { overrides: { 'store.statsIntervalMs': 100 } });
  const fwKey = await s.addSensor('fw-edge', { timezone: 'Europe/Berlin' });
  const genKey = await s.addSensor('ids-lab');
  const fw = { agent: s.agent, sensor: 'fw-edge', key: fwKey };
  const gen = { agent: s.agent, sensor: 'ids-lab', key: genKey };
  assert.equal((await post(s.url, '/firewall', firewallRecord({ severity: 'critical' }), fw)).status, 200);

  const { page, problems } = await openBrowser(t, 1000);
  const response = await page.goto(s.adminUrl as string);
  assert.equal(response?.status(), 200);
  assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
  await page.waitForSelector('#connection[data-state="live"]', { timeout: UI_MS });
  // The record stored before the page opened is in the feed already.
  await page.waitForSelector('#feed tbody tr', { timeout: UI_MS });

  /** POSTs, then measures from the 200 until the record's row is in the page. */
  const postAndSee = async (path: string, body: unknown, as: typeof fw) => {
    const reply = await post(s.url, path, body, as);
    const answered = performance.now();
    assert.equal(reply.status, 200, reply.text);
    const id = (reply.json as { ids: string[] }).ids[0] as string;
    await page.waitForSelector(`#feed tr[data-id="${id}"]`, { timeout: 15_000 });
    return { id, ms: performance.now() - answered };
  };

  const latencies: number[] = [];
  const scripted = await postAndSee('/generic', genericRecord({ threat: SCRIPT_NAME, criticality: 4 }), gen);
  latencies.push(scripted.ms);
  for (let i = 0; i < 4; i++) {
    const r = await postAndSee('/firewall', firewallRecord({ src: `198.18.0.${i + 1}` }), fw);
    latencies.push(r.ms);
  }
  // Newest first.
  const firstId = await page.getAttribute('#feed tbody tr:first-child', 'data-id');
  const last = await postAndSee('/generic', genericRecord({ threat: 'Port scan', criticality: 1 }), gen);
  latencies.push(last.ms);
  assert.equal(await page.getAttribute('#feed tbody tr:first-child', 'data-id'), last.id);
  assert.notEqual(firstId, last.id);

  // The <script> threat is text: shown verbatim, never run, no element made from it.
  const shownName = await page.textContent(`#feed tr[data-id="${scripted.id}"] td.threat`);
  assert.equal(shownName, SCRIPT_NAME);
  assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
  assert.equal(await page.locator('#feed script, #feed img').count(), 0);

  // Filter: endpoint generic and minimum criticality 4 -> only the <script> record stays.
  await page.selectOption('#filters select[name="endpoint"]', 'generic');
  await page.selectOption('#filters select[name="min"]', '4');
  await page.waitForSelector('#connection[data-state="live"]');
  await page.waitForFunction(
    (id) => {
      const rows = [...document.querySelectorAll('#feed tbody tr')];
      return rows.length === 1 && (rows[0] as HTMLElement).dataset.id === id;
    },
    scripted.id,
    { timeout: UI_MS },
  );
  // Live records obey the filter too: a firewall record is not shown, a critical generic one is.
  await post(s.url, '/firewall', firewallRecord({ severity: 'critical' }), fw);
  const filtered = await postAndSee(
    '/generic',
    genericRecord({ threat: 'Ransomware beacon', criticality: 4 }),
    gen,
  );
  latencies.push(filtered.ms);
  assert.equal(await page.locator('#feed tbody tr').count(), 2);

  // A rejected request shows in the sensor table: count, code and time.
  const rejected = await post(s.url, '/firewall', [{ nope: true }], fw);
  assert.equal(errorCode(rejected), 'VALIDATION_FAILED');
  await page.waitForFunction(
    () => {
      const row = [...document.querySelectorAll('#sensors tbody tr')].find(
        (r) => r.firstElementChild?.textContent === 'fw-edge',
      );
      return (
        row !== undefined &&
        /VALIDATION_FAILED at \d{4}-/.test(row.textContent ?? '') &&
        row.children[6]?.textContent === '1'
      );
    },
    undefined,
    { timeout: UI_MS },
  );
  // A wrong key under a registered name shows against that sensor (which box has the old key?).
  const wrongKey = await post(s.url, '/generic', genericRecord(), { ...gen, key: 'tc_not-the-key' });
  assert.equal(errorCode(wrongKey), 'AUTH_INVALID');
  await page
    .locator('#sensors tbody tr', { hasText: 'ids-lab' })
    .getByText(/^AUTH_INVALID at \d{4}-/)
    .waitFor({ timeout: UI_MS });
  const fwRow = await page.locator('#sensors tbody tr', { hasText: 'fw-edge' }).innerText();
  assert.match(fwRow, /Europe\/Berlin/);
  assert.match(fwRow, /127\.0\.0\.1/);
  // No output configured: the Outputs card says so (its rows come from /api/outputs).
  await page.locator('#outputs tbody tr', { hasText: 'none configured' }).waitFor({ timeout: UI_MS });
  const page_ = await page.content();
  assert.ok(!/sha256:|tc_[A-Za-z0-9]{8}/.test(page_), 'no key or key hash in the page');
  // The shipped databases' licences ask for their attribution (docs/operations.md): shown on the page's footer.
  const footer = await page.locator('footer.attribution').innerText();
  for (const credit of ['ip-location-db', 'RouteViews', 'NRO', 'DB-IP', 'CC BY 4.0'])
    assert.ok(footer.includes(credit), `the footer credits ${credit}: ${footer}`);

  // Back to every record for the picture, with the counts filled in.
  await page.selectOption('#filters select[name="endpoint"]', '');
  await page.selectOption('#filters select[name="min"]', '0');
  await page.waitForSelector('#connection[data-state="live"]');
  await page.waitForFunction(
    () => document.querySelectorAll('#top-threats tbody tr td.num').length >= 3,
    undefined,
    {
      timeout: UI_MS,
    },
  );
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}dashboard-feed.png`, fullPage: true });

  assert.deepEqual(problems, []);
  const worst = Math.max(...latencies);
  t.diagnostic(
    `SSE latency from the 200 to the row in the page: ${latencies.map((ms) => ms.toFixed(0)).join(', ')} ms (worst ${worst.toFixed(0)} ms)`,
  );
  // DESIGN: within 1 s. Reported above, not asserted: on a loaded box a bound measured the load. That every
  // row arrived at all is asserted where each is awaited.
});

const TEN_MINUTES = 600_000;

test('dashboard: histogram bars match the records of known 10-minute buckets; click to filter; URL round trip; look-up by CIDR', {
  timeout: 90_000,
}, async (t) => {
  // The collector's clock is the test's: records are stamped into chosen buckets before the page opens
  // (the dashboard counts the stored days when first opened), then it runs on real time again.
  const base = Date.now();
  let clock: () => number = () => base;
  const s = await startTestServer(t, { now: () => clock() });
  const key = await s.addSensor('ids-lab');
  const fwKey = await s.addSensor('fw-edge');
  const gen = { agent: s.agent, sensor: 'ids-lab', key };
  const fw = { agent: s.agent, sensor: 'fw-edge', key: fwKey };
  // Buckets back from the current one: criticalities posted into each.
  const plan: Record<number, number[]> = { 2: [4, 4, 3], 5: [1, 2, 2, 0], 9: [3] };
  const bucketStart = (k: number) =>
    new Date((Math.floor(base / TEN_MINUTES) - k) * TEN_MINUTES).toISOString();
  // Oldest first, as a real clock stamps them: the store is read back in the order it was written.
  for (const [back, levels] of Object.entries(plan).reverse()) {
    clock = () => base - Number(back) * TEN_MINUTES;
    for (const [i, c] of levels.entries()) {
      const body = genericRecord({
        threat: `Bucket ${back} threat`,
        criticality: c,
        source_ip: `198.51.100.${Number(back) * 10 + i}`,
      });
      assert.equal((await post(s.url, '/generic', body, gen)).status, 200);
    }
  }
  clock = () => Date.now();
  const v6 = await post(
    s.url,
    '/firewall',
    firewallRecord({ src: '2001:db8:7::9', severity: 'critical' }),
    fw,
  );
  assert.equal(v6.status, 200, v6.text);
  // A block by hand of one of the sources, for the picture's Blocklist panel and its marks.
  const decided = await openStore(s.loaded.config, { dataDir: s.dataDir, logger: pino({ level: 'silent' }) });
  try {
    await decided.decisions.apply([
      {
        kind: 'block',
        key: '198.51.100.51/32',
        value: {
          address: '198.51.100.51/32',
          rule: 'manual',
          reason: 'SSH brute force on the VPN gateway',
          since: new Date(base - 300_000).toISOString(),
          until: new Date(base + 86_400_000).toISOString(),
          criticality: 4,
          records: 0,
          sensors: [],
          who: 'alice',
        },
      },
      {
        kind: 'allow',
        key: '192.0.2.0/24',
        value: {
          network: '192.0.2.0/24',
          reason: 'our VPN gateways',
          since: new Date(base).toISOString(),
          until: null,
          who: 'alice',
        },
      },
    ]);
  } finally {
    await decided.close();
  }

  const { page, problems } = await openBrowser(t, 1100);

  // URL round trip: a bookmarked view opens with its chips and a feed filtered by them.
  await page.goto(`${s.adminUrl}/?threat=Bucket%205&min=1`);
  await page.waitForSelector('#connection[data-state="live"]', { timeout: UI_MS });
  const chipKeys = () =>
    page.$$eval('#chips .chip', (chips) => chips.map((c) => (c as HTMLElement).dataset.key));
  assert.deepEqual(await chipKeys(), ['min', 'threat']);
  await page.waitForFunction(() => document.querySelectorAll('#feed tbody tr').length === 3, undefined, {
    timeout: UI_MS,
  });
  const feedThreats = await page.$$eval('#feed tbody td.threat', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(feedThreats, ['Bucket 5 threat', 'Bucket 5 threat', 'Bucket 5 threat']);
  assert.equal(await page.inputValue('#filters select[name="min"]'), '1');
  // The histogram follows the view's filters too: only bucket 5's records of criticality 1 and above.
  const histogramTotalIs = (want: number) =>
    page.waitForFunction(
      (n) =>
        [...document.querySelectorAll('#histogram .bar')].reduce(
          (sum, g) =>
            sum +
            ((g as SVGGElement).dataset.counts ?? '').split(',').reduce((a, c) => a + Number(c || 0), 0),
          0,
        ) === n,
      want,
      { timeout: UI_MS },
    );
  await histogramTotalIs(3);
  const filteredBar = await page.getAttribute(
    `#histogram .bar[data-from="${bucketStart(5)}"]`,
    'data-counts',
  );
  assert.equal(filteredBar, '0,1,2,0,0');

  // Removing the chips shows everything again, and the URL follows.
  await page.click('#chips .chip[data-key="threat"] button');
  await page.click('#chips .chip[data-key="min"] button');
  await page.waitForFunction(
    () => location.search === '' && document.querySelectorAll('#chips .chip').length === 0,
  );
  await page.waitForFunction(() => document.querySelectorAll('#feed tbody tr').length === 9, undefined, {
    timeout: UI_MS,
  });

  // The 24 h histogram: 144 bars; the planned buckets hold exactly their records, by criticality.
  await page.waitForFunction(() => document.querySelectorAll('#histogram .bar').length === 144, undefined, {
    timeout: UI_MS,
  });
  await histogramTotalIs(9);
  const bars = async () =>
    page.$$eval('#histogram .bar', (gs) =>
      gs.map((g) => {
        const e = g as SVGGElement;
        const segs = [...e.querySelectorAll('rect.seg')].map((r) => ({
          c: Number((r as SVGRectElement).dataset.criticality),
          n: Number((r as SVGRectElement).dataset.count),
          height: Number(r.getAttribute('height')),
        }));
        return {
          from: e.dataset.from ?? '',
          counts: e.dataset.counts ?? '',
          segs,
          title: e.querySelector('title')?.textContent ?? '',
        };
      }),
    );
  const drawn = await bars();
  const byFrom = new Map(drawn.map((b) => [b.from, b]));
  for (const [back, levels] of Object.entries(plan)) {
    const bar = byFrom.get(bucketStart(Number(back)));
    assert.ok(bar, `a bar at ${bucketStart(Number(back))}`);
    const want = [0, 1, 2, 3, 4].map((c) => levels.filter((l) => l === c).length);
    assert.equal(bar.counts, want.join(','), `bucket ${back} back`);
    assert.match(bar.title, new RegExp(`: ${levels.length} records`));
    for (const seg of bar.segs) assert.equal(seg.n, want[seg.c]);
  }
  // Heights are to scale: the tallest bar (4 records) against one of 3.
  const height = (back: number) =>
    byFrom.get(bucketStart(back))?.segs.reduce((sum, seg) => sum + seg.height, 0) ?? 0;
  assert.ok(Math.abs(height(2) / height(5) - 3 / 4) < 0.01, `${height(2)} vs ${height(5)}`);
  const planned = new Set(Object.keys(plan).map((k) => bucketStart(Number(k))));
  const others = drawn
    .filter((b) => !planned.has(b.from))
    .reduce((sum, b) => sum + b.counts.split(',').reduce((a, n) => a + Number(n), 0), 0);
  assert.equal(others, 1, 'the one record posted now, and nothing else');

  // Click a bar: the feed shows that interval's records only, and the chip says so.
  await page.click(`#histogram .bar[data-from="${bucketStart(5)}"] rect.seg >> nth=0`);
  await page.waitForFunction(() => document.querySelectorAll('#feed tbody tr').length === 4, undefined, {
    timeout: UI_MS,
  });
  assert.deepEqual(await chipKeys(), ['from']);
  assert.match(await page.evaluate(() => location.search), /from=.*&to=/);

  // Click a source address in the feed: filtered to it as well.
  const src = '198.51.100.51';
  await page.click(`#feed tbody td.src[data-value="${src}"]`);
  await page.waitForFunction(() => document.querySelectorAll('#feed tbody tr').length === 1, undefined, {
    timeout: UI_MS,
  });
  assert.deepEqual(await chipKeys(), ['src', 'from']);
  assert.ok((await page.evaluate(() => location.search)).includes(`src=${src}`));
  // ... and its source view opens: what `source show` says of it (GET /api/source), as text.
  await page.waitForFunction(
    (a) => {
      const view = document.querySelector('#source-view') as HTMLElement | null;
      const rows = [...(view?.querySelectorAll('tbody tr') ?? [])].map((tr) => tr.textContent ?? '');
      return (
        view?.hidden === false &&
        view.querySelector('.source-address')?.textContent === a &&
        rows.some((r) => /^records[1-9]/.test(r)) &&
        rows.some((r) => r.startsWith('blocked'))
      );
    },
    src,
    { timeout: UI_MS },
  );

  // The 7-day view: hourly bars, the same 9 records in all.
  await page.click('#chips .chip[data-key="src"] button');
  await page.click('#chips .chip[data-key="from"] button');
  assert.equal(
    await page.evaluate(() => (document.querySelector('#source-view') as HTMLElement).hidden),
    true,
  );
  await page.click('#range button[value="7d"]');
  await page.waitForFunction(() => document.querySelectorAll('#histogram .bar').length === 168, undefined, {
    timeout: UI_MS,
  });
  const week = await bars();
  assert.equal(
    week.reduce((sum, b) => sum + b.counts.split(',').reduce((a, n) => a + Number(n), 0), 0),
    9,
  );
  assert.ok((await page.evaluate(() => location.search)).includes('range=7d'));

  // Look-up by CIDR: an IPv4 network, then an IPv6 one.
  await page.selectOption('#look-up select[name="field"]', 'src');
  await page.fill('#look-up input[name="value"]', '198.51.100.48/28');
  await page.click('#look-up button[type="submit"]');
  await page.waitForFunction(
    () => /found/.test(document.querySelector('#look-up-note')?.textContent ?? ''),
    undefined,
    { timeout: UI_MS },
  );
  const found = await page.$$eval('#look-up-results tbody td.src', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(found.sort(), ['198.51.100.50', '198.51.100.51', '198.51.100.52', '198.51.100.53']);
  await page.fill('#look-up input[name="value"]', '2001:db8::/32');
  await page.click('#look-up button[type="submit"]');
  await page.waitForFunction(
    () => document.querySelectorAll('#look-up-results tbody tr').length === 1,
    undefined,
    { timeout: UI_MS },
  );
  assert.match((await page.textContent('#look-up-results tbody td.src')) ?? '', /^\[2001:db8:7::9\]:/);

  await page.click('#range button[value="24h"]');
  await page.waitForFunction(() => document.querySelectorAll('#histogram .bar').length === 144, undefined, {
    timeout: UI_MS,
  });
  await page.waitForSelector('#feed td.src.blocked[data-address="198.51.100.51"]', { timeout: UI_MS });
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}dashboard.png`, fullPage: true });
  assert.deepEqual(problems, []);
});

test('dashboard: the Blocklist panel shows a rule-made block, marks its address across the page, and shows a markup reason as text', {
  timeout: 90_000,
}, async (t) => {
  const s = await startTestServer(t, {
    overrides: {
      'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
      'blocklist.allow': ['192.0.2.128/25'],
      // The manual block and the rule-made one: the bound reached, and the panel says so.
      'blocklist.maxBlocks': 2,
    },
  });
  const key = await s.addSensor('ids-lab');
  const gen = { agent: s.agent, sensor: 'ids-lab', key };
  const now = Date.now();
  const store = await openStore(s.loaded.config, { dataDir: s.dataDir, logger: pino({ level: 'silent' }) });
  const changes: DecisionChange[] = [
    {
      kind: 'block',
      key: '203.0.113.66/32',
      value: {
        address: '203.0.113.66/32',
        rule: 'manual',
        reason: SCRIPT_NAME,
        since: new Date(now - 60_000).toISOString(),
        until: new Date(now + 7_200_000).toISOString(),
        criticality: 4,
        records: 0,
        sensors: [],
        who: 'alice',
      },
    },
    {
      kind: 'allow',
      key: '198.18.0.0/15',
      value: {
        network: '198.18.0.0/15',
        reason: 'partner VPN',
        since: new Date().toISOString(),
        until: null,
        who: 'bob',
      },
    },
    {
      kind: 'feed',
      key: 'edge',
      value: {
        name: 'edge',
        format: 'paloalto',
        passwordHash: hashKey('secret-password-7'),
        maxEntries: null,
        family: 'any',
        createdAt: new Date().toISOString(),
        rotatedAt: null,
      },
    },
  ];
  try {
    await store.decisions.apply(changes);
  } finally {
    await store.close();
  }
  // The firewall pulls its feed once over real TLS.
  const pulled = await request(`${s.url}/feeds/edge`, {
    headers: { authorization: `Basic ${Buffer.from('edge:secret-password-7').toString('base64')}` },
    dispatcher: s.agent,
  });
  await pulled.body.text();
  assert.equal(pulled.statusCode, 200);

  const { page, problems } = await openBrowser(t, 1000);
  assert.equal((await page.goto(s.adminUrl as string))?.status(), 200);
  await page.waitForSelector('#connection[data-state="live"]', { timeout: UI_MS });

  // A critical record from 198.51.100.7 and an informational one from its neighbour, over real TLS.
  const reply = await post(
    s.url,
    '/generic',
    [
      genericRecord({ source_ip: '198.51.100.7', criticality: 4, threat: 'Ransomware beacon' }),
      genericRecord({ source_ip: '198.51.100.8', criticality: 0, threat: 'Ping' }),
    ],
    gen,
  );
  assert.equal(reply.status, 200, reply.text);
  const posted = performance.now();
  const ids = (reply.json as { ids: string[] }).ids;
  const blockRow = page.locator('#blocks tbody tr', { hasText: '198.51.100.7/32' });
  await blockRow.waitFor({ timeout: UI_MS });
  t.diagnostic(`the block on the panel ${(performance.now() - posted).toFixed(0)} ms after the 200`);
  assert.equal(await blockRow.locator('td.rule').textContent(), 'critical');
  assert.match((await blockRow.textContent()) ?? '', /ids-lab/);
  assert.match(
    (await page.textContent('#blocks-note')) ?? '',
    /^2 active blocks; blocklist\.maxBlocks \(2\) reached: the rules block no new address until blocks end$/,
  );

  // Marked in the feed (the blocked source only), the top sources and a look-up.
  await page.waitForSelector(`#feed tr[data-id="${ids[0]}"] td.src.blocked`, { timeout: UI_MS });
  assert.equal(await page.locator(`#feed tr[data-id="${ids[1]}"] td.src.blocked`).count(), 0);
  await page.waitForSelector('#top-sources td.blocked[data-address="198.51.100.7"]', { timeout: UI_MS });
  assert.equal(await page.locator('#top-sources td.blocked[data-address="198.51.100.8"]').count(), 0);
  await page.selectOption('#look-up select[name="field"]', 'src');
  await page.fill('#look-up input[name="value"]', '198.51.100.0/24');
  await page.click('#look-up button[type="submit"]');
  await page.waitForFunction(
    () => document.querySelectorAll('#look-up-results tbody tr').length === 2,
    undefined,
    { timeout: UI_MS },
  );
  await page.waitForSelector('#look-up-results td.src.blocked[data-address="198.51.100.7"]', {
    timeout: UI_MS,
  });
  assert.equal(await page.locator('#look-up-results td.blocked[data-address="198.51.100.8"]').count(), 0);

  // The manual block's reason is markup: shown as text, never run.
  const scripted = page.locator('#blocks tbody tr', { hasText: '203.0.113.66/32' });
  assert.equal(await scripted.locator('td.reason').textContent(), SCRIPT_NAME);
  assert.equal(await page.locator('#blocklist script, #blocklist img').count(), 0);
  assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
  // Allow entries, both kinds; the feed's last fetch: when, from where, its status.
  const allowText = (await page.textContent('#allow tbody')) ?? '';
  assert.match(allowText, /198\.18\.0\.0\/15.*partner VPN/);
  assert.match(allowText, /192\.0\.2\.128\/25/);
  const feedRow = page.locator('#feeds tbody tr', { hasText: 'edge' });
  await page.waitForFunction(
    () => document.querySelector('#feeds tbody td.fetch-ok')?.textContent === '200',
    undefined,
    { timeout: UI_MS },
  );
  assert.match((await feedRow.textContent()) ?? '', /paloalto.*127\.0\.0\.1/);

  mkdirSync(OUTPUT, { recursive: true });
  await page.locator('#blocklist').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${OUTPUT}dashboard-blocklist.png`, fullPage: true });
  // The network's source view: not blocked whole, the block inside it named.
  await page.goto(`${s.adminUrl}/?src=${encodeURIComponent('198.51.100.0/24')}`);
  const blockedRow = page.locator('#source-view tbody tr', { hasText: /^blocked/ });
  await blockedRow.waitFor({ timeout: UI_MS });
  assert.match(await blockedRow.innerText(), /no; 1 within: 198\.51\.100\.7\/32/);
  assert.deepEqual(problems, []);
});

test('dashboard: top source countries and networks count the enriched records; a click looks up its records', {
  timeout: 90_000,
}, async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('fw-edge');
  // Public addresses the shipped databases know, and a documentation one they leave without fields.
  const sources = [
    '8.8.8.8',
    '8.8.8.8',
    '8.8.8.8',
    '2001:4860:4860::8888',
    '1.1.1.1',
    '1.1.1.1',
    '203.0.113.5',
  ];
  const reply = await post(
    s.url,
    '/generic',
    sources.map((source_ip, i) => genericRecord({ source_ip, threat: `Probe ${i}` })),
    { agent: s.agent, sensor: 'fw-edge', key },
  );
  assert.equal(reply.status, 200, reply.text);
  const stored = readStored(s.dataDir);
  assert.equal(stored.filter((r) => r.src_country === 'US' && r.src_asn === 15169).length, 4);
  assert.equal(stored.filter((r) => r.src_country === undefined).length, 1);
  /** Counts by name, most first then by name: the page's top lists. */
  const tally = (name: (r: Record<string, unknown>) => string | null) => {
    const counts = new Map<string, number>();
    for (const r of stored) {
      const n = name(r);
      if (n !== null) counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([n, count]) => `${n}|${count}`);
  };
  const countries = tally((r) => (typeof r.src_country === 'string' ? r.src_country : null));
  const asns = tally((r) =>
    typeof r.src_asn === 'number' ? `AS${r.src_asn}${r.src_as_org ? ` ${r.src_as_org}` : ''}` : null,
  );

  const { page, problems } = await openBrowser(t, 1400);
  assert.equal((await page.goto(s.adminUrl as string))?.status(), 200);
  const rowsOf = (table: string) =>
    page.$$eval(`${table} tbody tr`, (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent).join('|')),
    );
  await page.waitForFunction(
    (want) => document.querySelectorAll('#top-asns tbody td[data-look-up]').length === want,
    asns.length,
    { timeout: UI_MS },
  );
  assert.deepEqual(await rowsOf('#top-countries'), countries);
  assert.deepEqual(await rowsOf('#top-asns'), asns);

  /** Clicks a top list's first entry; the look-up shows the stored records `matches` picks, newest first. */
  const clickAndSee = async (
    table: string,
    field: string,
    matches: (r: Record<string, unknown>) => boolean,
  ) => {
    const want = stored
      .filter(matches)
      .map((r) => r.id as string)
      .reverse();
    await page.click(`${table} tbody [data-look-up] >> nth=0`);
    await page.waitForFunction(
      (n) =>
        /found/.test(document.querySelector('#look-up-note')?.textContent ?? '') &&
        document.querySelectorAll('#look-up-results tbody tr').length === n,
      want.length,
      { timeout: UI_MS },
    );
    const ids = await page.$$eval('#look-up-results tbody tr', (trs) =>
      trs.map((tr) => (tr as HTMLElement).dataset.id),
    );
    assert.deepEqual(ids, want, table);
    assert.equal(await page.inputValue('#look-up select[name="field"]'), field);
  };
  const topCountry = (countries[0] as string).split('|')[0];
  await clickAndSee('#top-countries', 'src_country', (r) => r.src_country === topCountry);
  assert.equal(await page.inputValue('#look-up input[name="value"]'), topCountry);
  const topAsn = Number(/^AS(\d+)/.exec(asns[0] as string)?.[1]);
  await clickAndSee('#top-asns', 'src_asn', (r) => r.src_asn === topAsn);
  // A source of those opens its source view, whose country looks up that country's records of 30 days.
  await page.click('#look-up-results tbody td.src >> nth=0');
  await clickAndSee('#source-view', 'src_country', (r) => r.src_country === 'US');
  assert.equal(await page.inputValue('#look-up select[name="window"]'), '30d');
  // A network's view over sources of two ASes says how many, as `source show` does, not one of them.
  await page.goto(`${s.adminUrl}/?src=${encodeURIComponent('0.0.0.0/4')}`);
  const networkRow = page.locator('#source-view tbody tr', { hasText: /^network/ });
  await networkRow.waitFor({ timeout: UI_MS });
  assert.match(await networkRow.innerText(), /2 ASes/);
  assert.doesNotMatch(await networkRow.innerText(), /AS15169|AS13335/);
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}dashboard-networks.png`, fullPage: true });
  assert.deepEqual(problems, []);
});

/** Headless Debian chromium, one page `height` px tall; `problems` collects its page errors and console errors. */
async function openBrowser(t: TestContext, height: number) {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1360, height } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return { page, problems };
}

test("dashboard: the endpoint filter offers every endpoint a record has, the collector's own among them", {
  timeout: 60_000,
}, async (t) => {
  // A sensor silent past 1 s: the collector's record of it (endpoint collector) comes within a look or two.
  const s = await startTestServer(t, { overrides: { 'sensors.expectEvery': '1s' } });
  const key = await s.addSensor('fw-quiet');
  const { page, problems } = await openBrowser(t, 800);
  await page.goto(s.adminUrl as string);
  await page.waitForSelector('#connection[data-state="live"]', { timeout: UI_MS });
  const offered = await page.$$eval('#filters select[name="endpoint"] option', (options) =>
    options.map((o) => (o as HTMLOptionElement).value),
  );
  assert.deepEqual(offered, ['', ...RECORD_ENDPOINTS]);

  const reply = await post(s.url, '/generic', genericRecord(), { agent: s.agent, sensor: 'fw-quiet', key });
  assert.equal(reply.status, 200, reply.text);
  await page.selectOption('#filters select[name="endpoint"]', 'collector');
  await page.waitForSelector('#connection[data-state="live"]');
  const endpoints = () =>
    page.$$eval('#feed tbody tr td:nth-child(3)', (cells) => cells.map((c) => c.textContent));
  await page.waitForFunction(
    () => document.querySelectorAll('#feed tbody tr[data-id]').length >= 1,
    undefined,
    { timeout: UI_MS },
  );
  assert.deepEqual([...new Set(await endpoints())], ['collector'], "only the collector's records");
  assert.match(await page.innerText('#feed tbody tr[data-id]'), /fw-quiet/);
  assert.deepEqual(problems, []);
});

test('dashboard: a page of 600 addresses asks the blocklist about at most its bound; a failing blocklist leaves the other panels updating', {
  timeout: 90_000,
}, async (t) => {
  const s = await startTestServer(t, { overrides: { 'store.statsIntervalMs': 100 } });
  const key = await s.addSensor('fw-edge');
  const fw = { agent: s.agent, sensor: 'fw-edge', key };
  const { page } = await openBrowser(t, 800);
  await page.goto(s.adminUrl as string);
  await page.waitForSelector('#connection[data-state="live"]', { timeout: UI_MS });
  // 600 short addresses on the page (10.0.N.M: all of them fit the query's length), as a busy feed shows.
  await page.evaluate(() => {
    const box = document.createElement('div');
    box.hidden = true;
    for (let i = 0; i < 600; i++) {
      const span = document.createElement('span');
      span.dataset.address = `10.0.${i >> 8}.${(i & 255) + 1}`;
      box.append(span);
    }
    document.body.append(box);
  });
  const asked = await page.waitForResponse(
    (r) => new URL(r.url()).pathname === '/api/blocklist' && r.url().includes('10.0.0.1,'),
    { timeout: UI_MS },
  );
  const checked = (new URL(asked.url()).searchParams.get('check') ?? '').split(',');
  assert.equal(asked.status(), 200, `${checked.length} addresses asked about`);
  const { maxChecked } = (await asked.json()) as { maxChecked: number };
  assert.equal(maxChecked, 500);
  assert.equal(checked.length, maxChecked, 'as many as the server takes, no more');
  await page.waitForFunction(
    () => /^updated \d\d:\d\d:\d\d UTC$/.test(document.querySelector('#updated')?.textContent ?? ''),
    undefined,
    { timeout: UI_MS },
  );

  // The blocklist fails from now on: the header says so, and a record posted now still reaches the sensor table.
  await page.route('**/api/blocklist*', (route) => route.fulfill({ status: 503, body: '{}' }));
  assert.equal((await post(s.url, '/firewall', firewallRecord(), fw)).status, 200);
  await page.waitForFunction(
    () => {
      const row = [...document.querySelectorAll('#sensors tbody tr')].find(
        (r) => r.firstElementChild?.textContent === 'fw-edge',
      );
      return row?.children[5]?.textContent === '1';
    },
    undefined,
    { timeout: UI_MS },
  );
  await page.waitForFunction(
    () =>
      /^\/api\/blocklist: HTTP 503; the rest updated \d\d:\d\d:\d\d UTC$/.test(
        document.querySelector('#updated')?.textContent ?? '',
      ),
    undefined,
    { timeout: UI_MS },
  );
});
