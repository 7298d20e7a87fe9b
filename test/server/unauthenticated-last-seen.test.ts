// Review finding: since the dashboard's "rejected under a registered name" change (ingest.ts: claimed =
// auth.registeredName(...) for AUTH_INVALID / SENSOR_REVOKED), a request with NO valid key, only a
// registered sensor's name, updates that sensor's last_seen and last_address (sensor-stats.ts
// recordRejected). Anyone who can reach the sensors' port and knows or guesses a name ("fw1") can make a dead
// firewall look alive in `sensor list` and on the dashboard, and put any address in "last address".
// Counting the rejection is documented; overwriting last seen / last address without authentication is not.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('a request with a wrong key under a registered name does not make the sensor "last seen"', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const reply = await post(serve.url, '/generic', genericRecord(), {
    sensor: 'fw1',
    key: 'not-the-key-at-all-0000000000000000',
    agent,
  });
  assert.equal(reply.status, 401);
  assert.ok(serve.adminUrl);
  const rows = (await (await fetch(`${serve.adminUrl}/api/sensors`)).json()) as {
    sensors: { name: string; last_seen: string | null; last_address: string | null; rejected: number }[];
  };
  const fw1 = rows.sensors.find((s) => s.name === 'fw1');
  assert.equal(fw1?.rejected, 1, 'control: the rejection is counted (documented)');
  assert.deepEqual(
    { last_seen: fw1?.last_seen, last_address: fw1?.last_address },
    { last_seen: null, last_address: null },
    "an unauthenticated request set the sensor's last seen / last address",
  );
  // The same through the CLI after the stats are written at stop.
  await serve.stop('SIGTERM');
  const list = await runCli(['sensor', 'list', '--json', '--data-dir', dataDir]);
  assert.equal(list.code, 0, list.stderr);
  assert.doesNotMatch(list.stdout, /"last_seen": "\d/, `sensor list: ${list.stdout}`);
});
