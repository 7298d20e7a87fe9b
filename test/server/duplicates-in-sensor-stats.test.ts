// Review finding (low): a retried delivery answered as a duplicate is not stored, and
// threatcol_records_accepted_total leaves it out (ingest.ts: accepted.count - appended.duplicates), but the
// sensor's "accepted records" (sensor-stats.json: records_received; `sensor list`, the dashboard's sensor
// table) counts it again (ingest.ts: deps.stats.recordAccepted(..., accepted.count, ...)). The two views of
// one sensor disagree, and a sender that retries a lot looks busier than it is.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { firewallRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('a duplicate delivery does not count as an accepted record in the sensor table', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const record = firewallRecord({ threat_name: 'review-dup-stats' });
  for (let i = 0; i < 3; i++) {
    const reply = await post(serve.url, '/firewall', record, { sensor: 'fw1', key, agent });
    assert.equal(reply.status, 200, reply.text);
  }
  assert.ok(serve.adminUrl);
  const rows = (await (await fetch(`${serve.adminUrl}/api/sensors`)).json()) as {
    sensors: { name: string; accepted: number }[];
  };
  const metrics = await (await fetch(`${serve.adminUrl}/metrics`)).text();
  const metricLine = metrics.split('\n').find((l) => l.startsWith('threatcol_records_accepted_total{'));
  assert.equal(readStored(dataDir).length, 1, 'control: stored once');
  assert.equal(
    rows.sensors.find((s) => s.name === 'fw1')?.accepted,
    1,
    `sensor table vs store (1) vs metric (${metricLine})`,
  );
});
