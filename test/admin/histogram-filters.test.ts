// The dashboard's histogram follows every filter of the view: sensor, endpoint, threat, source, destination and
// minimum criticality, through the real admin listener of an in-process collector (records POSTed over TLS),
// for the stored days and for records arriving after the filtered histogram was first asked for. The memory
// bound (second test, on a real files store): many distinct filters never hold more than a fixed number of
// filtered histograms, and one nobody asks for is dropped; an evicted one is counted again when asked for. The
// third: a filter whose client left is dropped on a timer, its week's scan aborted and its subscription ended.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import {
  createFilteredHistograms,
  IDLE_MS,
  MAX_FILTERED_HISTOGRAMS,
} from '../../src/admin/filtered-histograms.js';
import { createLiveFeed, type LiveFeed } from '../../src/admin/live-feed.js';
import { loadConfig } from '../../src/config/load-config.js';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { openStore } from '../../src/store/open-store.js';
import type { RecordReader } from '../../src/store/store.js';
import { post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const TEN_MINUTES = 600_000;

interface HistogramAnswer {
  range: string;
  bucketMs: number;
  from: string;
  buckets: number[][];
  complete: boolean;
}

test('histogram: narrowed by sensor, endpoint, threat, source, destination and minimum criticality; live records counted', {
  timeout: 120_000,
}, async (t) => {
  const base = Date.now();
  let clock: () => number = () => base;
  const s = await startTestServer(t, { now: () => clock() });
  const idsKey = await s.addSensor('ids-lab');
  const fwKey = await s.addSensor('fw-edge');
  const ids = { agent: s.agent, sensor: 'ids-lab', key: idsKey };
  const fw = { agent: s.agent, sensor: 'fw-edge', key: fwKey };
  // Oldest first, as a real clock stamps them.
  clock = () => base - 5 * TEN_MINUTES;
  for (const [threat, criticality, source] of [
    ['Alpha scan', 1, '198.51.100.1'],
    ['Alpha scan', 3, '198.51.100.2'],
    ['Beta worm', 4, '203.0.113.9'],
  ] as const) {
    const body = genericRecord({ threat, criticality, source_ip: source });
    assert.equal((await post(s.url, '/generic', body, ids)).status, 200);
  }
  clock = () => base - 2 * TEN_MINUTES;
  assert.equal(
    (await post(s.url, '/firewall', firewallRecord({ src: '198.51.100.7', severity: 'critical' }), fw))
      .status,
    200,
  );
  assert.equal(
    (await post(s.url, '/generic', genericRecord({ threat: 'Alpha scan', criticality: 2 }), fw)).status,
    200,
  );
  clock = () => Date.now();

  const get = async (query: string): Promise<HistogramAnswer> => {
    const res = await fetch(`${s.adminUrl}/api/histogram?${query}`);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as HistogramAnswer;
  };
  /** Waits for the complete answer (the filtered count reads the stored days first). */
  const complete = async (query: string): Promise<HistogramAnswer> => {
    let answer: HistogramAnswer | null = null;
    await until(
      async () => {
        answer = await get(query);
        return answer.complete;
      },
      60_000,
      `a complete histogram for ${query}`,
    );
    return answer as unknown as HistogramAnswer;
  };
  const bucketOf = (h: HistogramAnswer, back: number) => {
    const i = (Math.floor(base / h.bucketMs) - back) * h.bucketMs - Date.parse(h.from);
    return h.buckets[i / h.bucketMs] as number[];
  };
  const total = (h: HistogramAnswer) => h.buckets.flat().reduce((a, b) => a + b, 0);

  const all = await complete('range=24h');
  assert.equal(total(all), 5);
  assert.deepEqual(bucketOf(all, 5), [0, 1, 0, 1, 1]);

  const bySensor = await complete('range=24h&sensor=ids-lab');
  assert.equal(total(bySensor), 3, 'sensor');
  assert.deepEqual(bucketOf(bySensor, 5), [0, 1, 0, 1, 1]);
  assert.deepEqual(bucketOf(bySensor, 2), [0, 0, 0, 0, 0]);

  const byThreat = await complete('range=24h&threat=alpha');
  assert.equal(total(byThreat), 3, 'threat, as the feed matches it: contained, any case');
  assert.deepEqual(bucketOf(byThreat, 5), [0, 1, 0, 1, 0]);
  assert.deepEqual(bucketOf(byThreat, 2), [0, 0, 1, 0, 0]);

  const bySource = await complete('range=24h&src=198.51.100.0/29');
  assert.equal(total(bySource), 3, 'source network: .1 and .2 of ids-lab, .7 of fw-edge');

  const byEndpoint = await complete('range=7d&endpoint=firewall');
  assert.equal(total(byEndpoint), 1, 'endpoint, over the week');
  assert.equal(byEndpoint.buckets.length, 168);

  const byMin = await complete('range=24h&sensor=ids-lab&min=3');
  assert.deepEqual(bucketOf(byMin, 5), [0, 0, 0, 1, 1], 'minimum criticality: the lower ones are left out');

  const byTwo = await complete('range=24h&sensor=fw-edge&threat=alpha');
  assert.equal(total(byTwo), 1, 'filters together');

  // An interval (a clicked bar) does not narrow the histogram: it is the bar's selection.
  const withInterval = await complete(
    `range=24h&sensor=ids-lab&from=${new Date(base - 60 * TEN_MINUTES).toISOString()}&to=${new Date(base - 50 * TEN_MINUTES).toISOString()}`,
  );
  assert.equal(total(withInterval), 3);

  // A record arriving now is counted in the filtered histograms it matches, and only in those.
  const reply = await post(s.url, '/generic', genericRecord({ threat: 'Alpha scan', criticality: 4 }), ids);
  assert.equal(reply.status, 200);
  await until(
    async () => total(await get('range=24h&sensor=ids-lab')) === 4,
    30_000,
    'the live record counted',
  );
  await until(
    async () => total(await get('range=24h&threat=alpha')) === 4,
    30_000,
    'the live record counted',
  );
  assert.equal(total(await get('range=24h&sensor=fw-edge&threat=alpha')), 1);
  assert.equal(total(await get('range=7d&endpoint=firewall')), 1);

  // Bounded: more distinct filters than are kept; the first is evicted and counted again when asked for.
  for (let i = 0; i < MAX_FILTERED_HISTOGRAMS + 4; i++) await get(`range=24h&threat=nothing-${i}`);
  const again = await complete('range=24h&sensor=ids-lab');
  assert.equal(total(again), 4, 'counted again from the store');

  // An unparsable source is "any", as in the feed.
  assert.equal(total(await complete('range=24h&src=not-an-address')), 6);
});

test('filtered histograms: at most MAX_FILTERED_HISTOGRAMS held whatever is asked, an idle one dropped', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  let clock = Date.now();
  appendFileSync(
    join(threatsDir(dataDir), `${utcDay(clock)}-000001.ndjson`),
    `${JSON.stringify(storedGenericRecord({ received_at: new Date(clock - 60_000).toISOString(), sensor: 'fw1' }))}\n`,
  );
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const logger = pino({ level: 'silent' });
  const files = await openStore(config, { dataDir, logger });
  const feed = createLiveFeed({ reader: files.reader, logger, now: () => clock, pollIntervalMs: 20 });
  const histograms = createFilteredHistograms({ reader: files.reader, feed, now: () => clock });
  t.after(async () => {
    histograms.stop();
    feed.stop();
    await files.close();
  });
  feed.start();
  await until(() => feed.warm, 20_000, 'the week counted');
  for (let i = 0; i < 200; i++) {
    histograms.histogram({ threat: `name-${i}-${'x'.repeat(150)}` }, '7d');
    assert.ok(histograms.size <= MAX_FILTERED_HISTOGRAMS, `${histograms.size} held`);
  }
  const total = () =>
    histograms
      .histogram({ sensor: 'fw1' }, '24h')
      .buckets.flat()
      .reduce((a, b) => a + b, 0);
  await until(() => histograms.histogram({ sensor: 'fw1' }, '24h').complete, 20_000, 'fw1 counted');
  assert.equal(total(), 1);
  assert.equal(histograms.size, MAX_FILTERED_HISTOGRAMS);
  // Nobody asks for a minute: every filter but the one asked for next is dropped.
  clock += IDLE_MS + 1;
  histograms.histogram({ sensor: 'fw1' }, '24h');
  assert.equal(histograms.size, 1);
});

test('filtered histograms: one whose client left is dropped on a timer, its scan aborted and its subscription ended', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  let clock = Date.parse('2026-11-21T10:00:00Z');
  // A week's scan that never ends by itself (a large store): only its signal stops it.
  const signals: AbortSignal[] = [];
  const reader = {
    scan: (_since: number, _visit: unknown, signal?: AbortSignal) => {
      if (signal) signals.push(signal);
      return new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
    },
  } as unknown as RecordReader;
  let subscribed = 0;
  const feed = {
    warm: true,
    subscribe: () => {
      subscribed++;
      return () => subscribed--;
    },
  } as unknown as LiveFeed;
  const histograms = createFilteredHistograms({ reader, feed, now: () => clock });
  t.after(() => histograms.stop());

  assert.equal(histograms.histogram({ sensor: 'fw1' }, '24h').complete, false);
  await until(() => signals.length === 1, 5_000, 'the scan started');
  assert.equal(subscribed, 1);
  // The page is closed: nothing asks again. Within the minute it is kept.
  clock += IDLE_MS - 1000;
  t.mock.timers.tick(IDLE_MS - 1000);
  assert.equal(histograms.size, 1);
  assert.equal(signals[0]?.aborted, false);
  // Past the minute it is dropped within the next: the scan is aborted, the feed no longer calls it.
  clock += IDLE_MS;
  t.mock.timers.tick(IDLE_MS);
  assert.equal(histograms.size, 0);
  assert.equal(signals[0]?.aborted, true);
  assert.equal(subscribed, 0);
});
