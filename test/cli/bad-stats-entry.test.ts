// Per-sensor activity entries that are not activity (null, a number, text, fields of the wrong type) in the
// files stats file and the NATS stats bucket: `sensor list` and `sensor show` still answer, counting them as no
// activity, and the collector keeps counting (the same class of trust as F7, found beside it).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { statsKey } from '../../src/store/nats/names.js';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

interface Row {
  name: string;
  records_received: number;
  last_address: string | null;
}

async function listed(dataDir: string, env: Record<string, string>): Promise<Row[]> {
  const r = await runCli(['sensor', 'list', '--json', '--data-dir', dataDir], { env });
  assert.equal(r.code, 0, r.stderr);
  const show = await runCli(['sensor', 'show', 'fw2', '--data-dir', dataDir], { env });
  assert.equal(show.code, 0, show.stderr);
  return JSON.parse(r.stdout) as Row[];
}

test('files: stats entries of the wrong shape count as no activity; the collector keeps counting', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  await addSensorCli(dataDir, 'fw2');
  writeFileSync(
    join(dataDir, 'sensor-stats.json'),
    JSON.stringify({
      updated_at: new Date().toISOString(),
      sensors: { fw1: 5, fw2: { records_received: 'many', last_address: { x: 1 } }, fw3: null },
    }),
  );
  assert.deepEqual(
    (await listed(dataDir, {})).map((r) => [r.name, r.records_received, r.last_address]),
    [
      ['fw1', 0, null],
      ['fw2', 0, null],
    ],
  );
  const serve = await spawnServe(
    dataDir,
    ['--stats-interval-ms', '100'].filter(() => false),
  );
  t.after(() => serve.stop());
  const reply = await post(serve.url, '/generic', genericRecord(), {
    agent: trustingAgent(dataDir),
    sensor: 'fw1',
    key,
  });
  assert.equal(reply.status, 200, JSON.stringify(reply));
  await serve.stop();
  const after = await listed(dataDir, {});
  assert.equal(after.find((r) => r.name === 'fw1')?.records_received, 1);
});

test('NATS: stats values of the wrong shape count as no activity', async (t) => {
  const nats = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: nats.url };
  await addSensorCli(dataDir, 'fw1', [], env);
  await addSensorCli(dataDir, 'fw2', [], env);
  await listed(dataDir, env); // creates the stats bucket
  const nc = await connect({ servers: nats.url });
  t.after(() => nc.close());
  const kv = await new Kvm(nc).open('threatcol_stats');
  await kv.put(statsKey('fw1', 'box-a'), 'null');
  await kv.put(statsKey('fw1', 'box-b'), 'not json');
  await kv.put(statsKey('fw2', 'box-a'), JSON.stringify({ records_received: 3, last_address: '192.0.2.1' }));
  await kv.put(statsKey('fw2', 'box-b'), JSON.stringify({ records_received: '7', requests_rejected: null }));
  assert.deepEqual(
    (await listed(dataDir, env)).map((r) => [r.name, r.records_received, r.last_address]),
    [
      ['fw1', 0, null],
      ['fw2', 3, null],
    ],
  );
});
