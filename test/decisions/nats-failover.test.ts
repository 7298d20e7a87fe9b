// One decisions engine per NATS cluster, through the real binary: two collectors share a nats-server, the
// lease holder is killed with SIGKILL, and a record stored through the other collector meanwhile is still
// blocked, by the other collector once the dead one's lease ran out.
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('nats: the engine lease holder killed with SIGKILL; the other collector takes over and blocks what came meanwhile', async (t) => {
  const node = await startNatsServer(t);
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: node.url };
  const config = join(makeTempDir(t), 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ blocklist: { rules: { critical: { minCriticality: 4, duration: '24h' } } } }),
  );
  const [dirA, dirB] = [makeTempDir(t), makeTempDir(t)];
  const key = await addSensorCli(dirA, 'fw1', [], env);
  const a = await spawnServe(dirA, ['--config', config], { env });
  t.after(() => a.stop('SIGKILL'));
  await until(
    () => a.logs.some((l) => l.msg === 'this collector runs the decisions engine now'),
    30_000,
    'a leads',
  );
  const b = await spawnServe(dirB, ['--config', config], { env });
  t.after(() => b.stop('SIGKILL'));
  const agent = trustingAgent(dirB);
  t.after(() => agent.close());
  const blocked = async (address: string) => {
    const r = await runCli(['block', 'list', '--json', '--data-dir', dirB, '--config', config], { env });
    return (
      r.code === 0 &&
      (JSON.parse(r.stdout) as { address: string }[]).some((x) => x.address === `${address}/32`)
    );
  };
  const send = async (address: string) => {
    const body = [genericRecord({ source_ip: address, criticality: 4 })];
    await until(
      async () => (await post(b.url, '/generic', body, { sensor: 'fw1', key, agent })).status === 200,
      30_000,
      `a record about ${address} stored`,
    );
  };
  await send('198.51.100.60');
  await until(() => blocked('198.51.100.60'), 30_000, 'the leader blocks it');
  a.child.kill('SIGKILL');
  await a.exited;
  const sent = Date.now();
  await send('198.51.100.61');
  await until(() => blocked('198.51.100.61'), 60_000, 'the other collector blocks it after the take-over');
  t.diagnostic(`blocked ${Date.now() - sent} ms after the record, the leader killed just before`);
  assert.ok(b.logs.some((l) => l.msg === 'this collector runs the decisions engine now'));
  assert.equal(b.logs.filter((l) => l.msg === 'address blocked').length, 1);
});
