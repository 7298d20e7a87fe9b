// Black-box: per-sensor rate limit, segment rotation by size and by UTC day, the periodic summary line.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { until } from '../helpers/until.js';

test('429 RATE_LIMITED with Retry-After for a sensor over its rate; other sensors are unaffected', async (t) => {
  const s = await startTestServer(t, {
    overrides: { 'rateLimit.recordsPerSecond': 1, 'rateLimit.burst': 1000 },
  });
  const noisy = await s.addSensor('noisy');
  const quiet = await s.addSensor('quiet');
  const full = await post(s.url, '/generic', Array(1000).fill(genericRecord()), {
    agent: s.agent,
    sensor: 'noisy',
    key: noisy,
  });
  assert.equal(full.status, 200);
  const limited = await post(s.url, '/generic', genericRecord(), {
    agent: s.agent,
    sensor: 'noisy',
    key: noisy,
  });
  assert.equal(limited.status, 429);
  assert.equal(errorCode(limited), 'RATE_LIMITED');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  const other = await post(s.url, '/generic', genericRecord(), {
    agent: s.agent,
    sensor: 'quiet',
    key: quiet,
  });
  assert.equal(other.status, 200);
  assert.equal(readStored(s.dataDir).length, 1001);
});

test('segments rotate by size and by UTC day; records stay whole and in order', async (t) => {
  let now = Date.parse('2026-11-21T23:59:58Z');
  const s = await startTestServer(t, { overrides: { 'store.segmentMaxBytes': 4096 }, now: () => now });
  const key = await s.addSensor('rot');
  const as = { agent: s.agent, sensor: 'rot', key };
  for (let i = 0; i < 20; i++) {
    assert.equal((await post(s.url, '/generic', genericRecord({ threat: `r${i}` }), as)).status, 200);
  }
  now = Date.parse('2026-11-22T00:00:01Z');
  assert.equal((await post(s.url, '/generic', genericRecord({ threat: 'next-day' }), as)).status, 200);
  const files = readdirSync(join(s.dataDir, 'threats')).sort();
  const day1 = files.filter((f) => f.startsWith('20261121-'));
  assert.ok(day1.length >= 2, `size rotation: ${files.join(' ')}`);
  assert.deepEqual(
    day1,
    day1.map((_, i) => `20261121-${String(i + 1).padStart(6, '0')}.ndjson`),
  );
  assert.deepEqual(
    files.filter((f) => f.startsWith('20261122-')),
    ['20261122-000001.ndjson'],
  );
  assert.deepEqual(
    readStored(s.dataDir).map((r) => r.threat),
    [...Array.from({ length: 20 }, (_, i) => `r${i}`), 'next-day'],
  );
});

test('a summary line at info counts accepted records and rejected requests by sensor', async (t) => {
  const s = await startTestServer(t, { overrides: { 'log.summaryIntervalMs': 200 } });
  const key = await s.addSensor('sum');
  await post(s.url, '/generic', [genericRecord(), genericRecord()], { agent: s.agent, sensor: 'sum', key });
  await post(s.url, '/generic', {}, { agent: s.agent, sensor: 'sum', key });
  // Each line counts its own interval: on a slow box the two requests may fall in two of them. Summed over
  // the lines, the counts are exact (nothing counted twice, nothing lost).
  const totals = () => {
    const sum = (field: string) => {
      const out: Record<string, number> = {};
      for (const line of s.logs.filter((l) => l.msg === 'summary' && l.level === 30)) {
        for (const [k, v] of Object.entries((line[field] ?? {}) as Record<string, number>)) {
          out[k] = (out[k] ?? 0) + v;
        }
      }
      return out;
    };
    return { accepted: sum('acceptedRecords'), rejected: sum('rejectedRequests') };
  };
  await until(
    () => totals().accepted.sum === 2 && totals().rejected['sum VALIDATION_FAILED'] === 1,
    30_000,
    'summary lines counting both requests',
  ).catch(() => assert.fail(`summary lines counted ${JSON.stringify(totals())}`));
  // A little longer: a later line must not count either again.
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(totals(), { accepted: { sum: 2 }, rejected: { 'sum VALIDATION_FAILED': 1 } });
});
