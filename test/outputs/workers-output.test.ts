// Under `serve --workers`, one forwarder per output runs in the primary and reads every worker's segments.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, untilDrained } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

test('serve --workers 2: one forwarder in the primary delivers the records of both workers, each once', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ outputs: { hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 50 } } } }),
  );
  const key = await addSensorCli(dir, 'fw');
  const serve = await spawnServe(dir, ['--config', config, '--workers', '2']);
  t.after(() => serve.stop('SIGKILL'));
  // Separate connections, so both workers take requests and write their own segment series.
  const agents = [trustingAgent(dir, { connections: 1 }), trustingAgent(dir, { connections: 1 })];
  t.after(() => Promise.all(agents.map((a) => a.close())));
  for (let i = 0; i < 40; i++) {
    const agent = agents[i % 2] as (typeof agents)[number];
    const body = Array.from({ length: 50 }, (_, j) => genericRecord({ threat: `r${i}-${j}` }));
    assert.equal((await post(serve.url, '/generic', body, { agent, sensor: 'fw', key })).status, 200);
  }
  const stored = readStored(dir);
  assert.equal(stored.length, 2000);
  const series = new Set(readdirSync(join(dir, 'threats')).map((f) => /-(w\d+)-/.exec(f)?.[1]));
  assert.deepEqual([...series].sort(), ['w1', 'w2'], 'both workers wrote segments');
  await untilDrained(() => 2000 - receiver.accepted.size, OUTPUTS_THREAD_MS, 'every record delivered');
  assert.ok(
    [...receiver.accepted.values()].every((n) => n === 1),
    'no duplicates without a crash',
  );
  const started = serve.logs.filter((l) => l.msg === 'output started');
  assert.equal(started.length, 1, 'one forwarder, not one per worker');

  // SIGHUP to the primary reloads the outputs: a second one starts (from the oldest record) and catches up.
  const other = await startReceiver();
  t.after(() => other.close());
  writeFileSync(
    config,
    JSON.stringify({
      outputs: {
        hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 50 } },
        second: { type: 'webhook', url: other.url, startAt: 'oldest' },
      },
    }),
  );
  serve.child.kill('SIGHUP');
  await untilDrained(
    () => 2000 - other.accepted.size,
    OUTPUTS_THREAD_MS,
    'the added output delivers everything',
  );
  assert.equal(serve.logs.filter((l) => l.msg === 'output started').length, 2);
});
