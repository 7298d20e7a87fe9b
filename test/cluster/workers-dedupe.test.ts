// `serve --workers 2` with the files backend: a retried delivery is recognised whichever worker it reaches
// (the primary holds the one dedupe window), one at a time and concurrently. (A dead worker's released
// claims: test/unit/cluster-parts.test.ts.)
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { firewallRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { announcedWorkers, postFresh, recordsByWorker } from './support.js';

test('workers 2: a retry reaching the other worker is a duplicate, sequential or concurrent; stored once', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir, ['--workers', '2']);
  t.after(() => serve.stop('SIGKILL'));
  assert.equal(announcedWorkers(serve).length, 2);
  const auth = { sensor: 'fw1', key };

  // One delivery and five retries, each on a new connection: the round robin alternates the workers.
  const record = firewallRecord({ threat_name: 'retried-across-workers' });
  const answers = [];
  for (let i = 0; i < 6; i++) answers.push(await postFresh(serve.url, '/firewall', record, auth));
  for (const a of answers) assert.equal(a.status, 200, a.body);
  const bodies = answers.map((a) => JSON.parse(a.body) as { ids: string[]; duplicates?: number });
  const firstId = bodies[0]?.ids[0];
  for (const b of bodies) assert.deepEqual(b.ids, [firstId]);
  assert.deepEqual(
    bodies.map((b) => b.duplicates ?? 0),
    [0, 1, 1, 1, 1, 1],
  );

  // Eight identical deliveries at once, spread over both workers: one stores, seven wait for it.
  const burst = firewallRecord({ threat_name: 'concurrent-across-workers' });
  const together = await Promise.all(
    Array.from({ length: 8 }, () => postFresh(serve.url, '/firewall', burst, auth)),
  );
  for (const a of together) assert.equal(a.status, 200, a.body);
  const ids = new Set(together.map((a) => (JSON.parse(a.body) as { ids: string[] }).ids[0]));
  assert.equal(ids.size, 1, 'every delivery answered with the same id');
  assert.equal(
    together.filter((a) => ((JSON.parse(a.body) as { duplicates?: number }).duplicates ?? 0) === 0).length,
    1,
  );

  const stored = readStored(dataDir).map((r) => (r.original as { threat_name?: string }).threat_name);
  assert.equal(stored.filter((n) => n === 'retried-across-workers').length, 1, 'stored once');
  assert.equal(stored.filter((n) => n === 'concurrent-across-workers').length, 1, 'stored once');
  // Both workers did take requests (the retries did reach the other worker).
  const workersWithRecords = [...recordsByWorker(dataDir).keys()];
  t.diagnostic(`records stored by workers ${workersWithRecords.join(', ')}`);
});
