// `serve --workers 2`: the primary serves the admin listener, /metrics sums what every worker counted
// (exactly the requests sent), /readyz is ready with every worker listening, the sensor table sees them all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { postFresh, recordsByWorker } from '../cluster/support.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { parseExposition, sampleValue } from '../helpers/prometheus.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('--workers 2: the primary admin listener aggregates both workers exactly', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir, ['--workers', '2'], {
    env: { THREATCOL_STORE_STATS_INTERVAL_MS: '100' },
  });
  t.after(() => serve.stop('SIGKILL'));
  const admin = serve.adminUrl;
  assert.ok(admin, 'the primary logged its admin listener');
  const ready = await fetch(`${admin}/readyz`);
  assert.equal(ready.status, 200, await ready.text());

  // Fresh connections, so node:cluster's round robin gives both workers some.
  const sent = 12;
  for (let i = 0; i < sent; i++) {
    const body = [genericRecord({ threat: `w-${i}-a` }), genericRecord({ threat: `w-${i}-b` })];
    const r = await postFresh(serve.url, '/generic', body, { sensor: 'fw1', key });
    assert.equal(r.status, 200, r.body);
  }
  const byWorker = recordsByWorker(dataDir);
  assert.ok((byWorker.get(1)?.length ?? 0) > 0 && (byWorker.get(2)?.length ?? 0) > 0, 'both workers stored');

  const res = await fetch(`${admin}/metrics`);
  assert.equal(res.status, 200);
  const f = parseExposition(await res.text());
  assert.equal(sampleValue(f, 'threatcol_requests_total', { endpoint: 'generic', code: 'OK' }), sent);
  assert.equal(
    sampleValue(f, 'threatcol_records_accepted_total', { sensor: 'fw1', endpoint: 'generic' }),
    2 * sent,
  );
  assert.equal(sampleValue(f, 'threatcol_request_duration_seconds_count', { endpoint: 'generic' }), sent);
  assert.equal(sampleValue(f, 'threatcol_store_batch_records_sum'), 2 * sent);
  assert.ok(f.has('process_cpu_user_seconds_total'));

  // The sensor table (the primary's stats, fed by the workers) catches up with both workers' counts.
  let accepted = 0;
  for (let i = 0; i < 100 && accepted !== 2 * sent; i++) {
    const sensors = (await (await fetch(`${admin}/api/sensors`)).json()) as {
      sensors: { name: string; accepted: number }[];
    };
    accepted = sensors.sensors.find((s) => s.name === 'fw1')?.accepted ?? 0;
    if (accepted !== 2 * sent) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(accepted, 2 * sent);
});
