// Reliability 5: far more concurrent requests than the store queue holds: the excess gets 503 + Retry-After at
// once, memory stays bounded, every acknowledged record is stored, and throughput recovers when load drops.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { errorCode, post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { percentile, rssBytes, soak, stopAfter } from './support.js';

const MiB = 1024 * 1024;
const CONCURRENCY = 200;
const RECORDS = 100;
const QUEUE = 200;
const WAVES = soak(4, 30);

test(`overload: ${WAVES} waves of ${CONCURRENCY} concurrent ${RECORDS}-record requests against a ${QUEUE}-record queue`, async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'flood');
  const serve = await spawnServe(dataDir, [], {
    env: {
      THREATCOL_STORE_QUEUE_MAX_RECORDS: String(QUEUE),
      THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '0',
      THREATCOL_RATE_LIMIT_BYTES_PER_SECOND: '0',
    },
  });
  stopAfter(t, serve);
  const pid = serve.child.pid as number;
  const agent = trustingAgent(dataDir, { connections: CONCURRENCY });
  t.after(() => agent.destroy());
  const body = (tag: string) =>
    Array.from({ length: RECORDS }, (_, i) => genericRecord({ threat: `${tag}-${i}` }));
  const send = async (tag: string) => {
    const started = performance.now();
    const r = await post(serve.url, '/generic', body(tag), { agent, sensor: 'flood', key });
    return { r, ms: performance.now() - started };
  };

  // Warm up (TLS sessions, JIT), then take the baseline.
  await Promise.all(Array.from({ length: 20 }, (_, i) => send(`warm-${i}`)));
  const baseline = rssBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 50);
  t.after(() => clearInterval(sampler));

  const acked = new Set<string>();
  const rejectedMs: number[] = [];
  const acceptedMs: number[] = [];
  let sent = 0;
  for (let w = 0; w < WAVES; w++) {
    const replies = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => send(`w${w}-${i}`)));
    for (const { r, ms } of replies) {
      sent++;
      if (r.status === 200) {
        for (const id of (r.json as { ids: string[] }).ids) acked.add(id);
        acceptedMs.push(ms);
      } else {
        assert.equal(r.status, 503, r.text);
        assert.equal(errorCode(r), 'UNAVAILABLE');
        assert.equal(r.headers['retry-after'], '1');
        rejectedMs.push(ms);
      }
    }
  }
  clearInterval(sampler);
  peak = Math.max(peak, rssBytes(pid));

  // Load drops: sequential requests are all accepted again.
  const recovery = performance.now();
  for (let i = 0; i < 50; i++) {
    const { r } = await send(`after-${i}`);
    assert.equal(r.status, 200, `after the flood: ${r.text}`);
    for (const id of (r.json as { ids: string[] }).ids) acked.add(id);
  }
  const afterRate = (50 * RECORDS) / ((performance.now() - recovery) / 1000);

  const stored = new Set(readStored(dataDir).map((r) => String(r.id)));
  const lost = [...acked].filter((id) => !stored.has(id));
  const summary =
    `requests=${sent} accepted=${acceptedMs.length} rejected503=${rejectedMs.length} ` +
    `503 p50=${percentile(rejectedMs, 50).toFixed(0)}ms p99=${percentile(rejectedMs, 99).toFixed(0)}ms ` +
    `200 p50=${percentile(acceptedMs, 50).toFixed(0)}ms p99=${percentile(acceptedMs, 99).toFixed(0)}ms rss baseline=${(baseline / MiB).toFixed(0)}MiB ` +
    `peak=${(peak / MiB).toFixed(0)}MiB acknowledged=${acked.size} lost=${lost.length} recovered=${afterRate.toFixed(0)} records/s`;
  t.diagnostic(summary);
  assert.ok(rejectedMs.length > 0, `the queue bound was reached: ${summary}`);
  assert.ok(acceptedMs.length > 0, 'some requests were accepted during the flood');
  // "At once": a 503 does not wait for the store (an accepted request waits for its fdatasync). Measured against
  // the accepted requests of the same run, never an absolute time: those depend on the machine's load.
  assert.ok(
    percentile(rejectedMs, 50) <= percentile(acceptedMs, 50) * 1.5 + 50,
    `503 is not slower than 200: ${summary}`,
  );
  assert.ok(peak - baseline < 256 * MiB, `RSS bounded: ${summary}`);
  assert.deepEqual(lost, [], 'acknowledged records lost');
});
