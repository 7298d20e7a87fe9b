// Per-sensor stats through the store: the daemon records the last rejection's code and time, and
// `sensor show` reports them with the counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';

test('sensor show reports the last rejection code and time next to the counts', async (t) => {
  const s = await startTestServer(t, { overrides: { 'store.statsIntervalMs': 100 } });
  const key = await s.addSensor('fw1');
  const as = { agent: s.agent, sensor: 'fw1', key };
  assert.equal((await post(s.url, '/generic', [genericRecord(), genericRecord()], as)).status, 200);
  const bad = await post(s.url, '/generic', [{ threat: 'no fields' }], as);
  assert.equal(bad.status, 400);
  assert.equal(await s.stop(), 0);

  const json = await runCli(['sensor', 'show', 'fw1', '--data-dir', s.dataDir, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const view = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.equal(view.records_received, 2);
  assert.equal(view.requests_rejected, 1);
  assert.equal(view.last_rejection_code, 'VALIDATION_FAILED');
  assert.match(String(view.last_rejected_at), /^\d{4}-\d\d-\d\dT/);
  const text = await runCli(['sensor', 'show', 'fw1', '--data-dir', s.dataDir]);
  assert.match(text.stdout, /^Last rejected: +\S+ \(VALIDATION_FAILED\)$/m);
});
