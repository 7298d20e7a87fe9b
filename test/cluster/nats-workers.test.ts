// `serve --workers 2` on the NATS backend: every worker publishes to the stream and watches the registry;
// a retried /firewall delivery is recognised whichever worker it reaches (JetStream's Nats-Msg-Id window).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { readStream, startNatsServer } from '../helpers/nats-server.js';
import { firewallRecord, genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { announcedWorkers, postFresh } from './support.js';

test('NATS, workers 2: both workers store; a retry on the other worker is a duplicate; a revocation reaches both', async (t) => {
  const node = await startNatsServer(t);
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: node.url };
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1', [], env);
  const serve = await spawnServe(dataDir, ['--workers', '2'], { env, timeoutMs: 30_000 });
  t.after(() => serve.stop());
  const workers = announcedWorkers(serve);
  assert.equal(workers.length, 2);
  const auth = { sensor: 'fw1', key };

  // Fresh connections alternate between the workers.
  for (let i = 0; i < 6; i++) {
    const r = await postFresh(serve.url, '/generic', genericRecord({ threat: `nw-${i}` }), auth);
    assert.equal(r.status, 200, r.body);
  }
  const record = firewallRecord({ threat_name: 'nats-retry-across-workers' });
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await postFresh(serve.url, '/firewall', record, auth));
  const bodies = answers.map((a) => JSON.parse(a.body) as { ids: string[]; duplicates?: number });
  assert.deepEqual(
    bodies.map((b) => b.duplicates ?? 0),
    [0, 1, 1, 1],
  );
  for (const b of bodies) assert.deepEqual(b.ids, bodies[0]?.ids);

  const stored = (await readStream([node.url])).map((m) => JSON.parse(m.text) as Record<string, unknown>);
  assert.equal(stored.filter((r) => String(r.threat).startsWith('nw-')).length, 6);
  assert.equal(
    stored.filter(
      (r) => (r.original as { threat_name?: string } | undefined)?.threat_name === record.threat_name,
    ).length,
    1,
  );

  // A revocation through the CLI is refused on fresh connections, so by both workers, within 5 s.
  const revoked = await runCli(['sensor', 'revoke', 'fw1', '--data-dir', dataDir], { env });
  assert.equal(revoked.code, 0, revoked.stderr);
  const started = Date.now();
  let refusedInARow = 0;
  while (refusedInARow < 4) {
    const r = await postFresh(serve.url, '/generic', genericRecord(), auth);
    refusedInARow = r.status === 403 ? refusedInARow + 1 : 0;
    assert.ok(Date.now() - started < 5000, `still ${r.status} after ${Date.now() - started} ms`);
  }
  t.diagnostic(`revocation refused by both workers after ${Date.now() - started} ms`);
});
