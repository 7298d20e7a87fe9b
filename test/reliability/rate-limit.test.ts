// Reliability 10: a sensor over its configured rate gets 429 with Retry-After; other sensors are unaffected.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { errorCode, post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { stopAfter } from './support.js';

test('rate limiting: the noisy sensor gets 429 + Retry-After, the quiet one keeps getting 200', async (t) => {
  const dataDir = makeTempDir(t);
  const noisyKey = await addSensorCli(dataDir, 'noisy');
  const quietKey = await addSensorCli(dataDir, 'quiet');
  // 20 records/s with a burst of 1000 (the smallest burst allowed).
  const serve = await spawnServe(dataDir, [], {
    env: { THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '20', THREATCOL_RATE_LIMIT_BURST: '1000' },
  });
  stopAfter(t, serve);
  const agent = trustingAgent(dataDir);
  t.after(() => agent.destroy());
  const batch = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => genericRecord({ threat: `${tag}-${i}` }));
  const noisy = (body: unknown) =>
    post(serve.url, '/generic', body, { agent, sensor: 'noisy', key: noisyKey });
  const quiet = (body: unknown) =>
    post(serve.url, '/generic', body, { agent, sensor: 'quiet', key: quietKey });

  const burst = await noisy(batch('burst', 1000));
  assert.equal(burst.status, 200, 'the burst is allowed');
  const over = await noisy(batch('over', 500));
  assert.equal(over.status, 429, over.text);
  assert.equal(errorCode(over), 'RATE_LIMITED');
  const retryAfter = Number(over.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${over.headers['retry-after']}`);
  // 500 records at 20/s need about 25 s more tokens than are left.
  assert.ok(retryAfter >= 20 && retryAfter <= 30, `Retry-After ${retryAfter} matches the deficit`);

  // Concurrently, while the noisy sensor keeps hammering, the quiet one is served.
  const hammer = Promise.all(Array.from({ length: 20 }, () => noisy(batch('hammer', 50))));
  const quietReplies = await Promise.all(
    Array.from({ length: 10 }, (_, i) => quiet(batch(`quiet-${i}`, 50))),
  );
  const hammered = await hammer;
  assert.deepEqual(
    quietReplies.map((r) => r.status),
    Array(10).fill(200),
    'quiet sensor unaffected',
  );
  assert.ok(
    hammered.every((r) => r.status === 429),
    'the noisy sensor stays limited',
  );

  // The rate refills: after a second, a small batch fits again.
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await noisy(batch('later', 10))).status, 200);

  const stored = readStored(dataDir);
  assert.equal(
    stored.filter((r) => String(r.threat).startsWith('over-')).length,
    0,
    'rejected records not stored',
  );
  assert.equal(stored.filter((r) => r.sensor === 'quiet').length, 500);
  t.diagnostic(`429 Retry-After=${retryAfter}s; quiet sensor 10/10 accepted during the flood`);
});
