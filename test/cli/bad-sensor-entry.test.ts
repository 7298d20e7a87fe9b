// One malformed sensor entry (no keys, null, a key without hash) in a running collector's registry, files and
// NATS: the collector keeps serving the other sensors, also after a restart, logs the entry at warn once,
// `sensor list` works (descriptions cleaned of escapes) and `check` names the entry.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { encodeToken } from '../../src/store/nats/names.js';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const EVIL = '\u001b]0;OWNED\u0007\u001b[2J';

async function accepted(serve: ServeProcess, dataDir: string, sensor: string, key: string): Promise<void> {
  const agent = trustingAgent(dataDir);
  let status = 0;
  for (let i = 0; i < 200 && status !== 200; i++) {
    status = (await post(serve.url, '/generic', genericRecord(), { agent, sensor, key })).status;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(status, 200, `${sensor} is not accepted: ${serve.stderr()}`);
}

async function survives(
  t: { after(fn: () => unknown): void },
  dataDir: string,
  env: Record<string, string>,
  putBad: (name: string, value: unknown) => Promise<void>,
): Promise<void> {
  const good = await addSensorCli(dataDir, 'good1', ['--description', `hq ${EVIL}`], env);
  let serve = await spawnServe(dataDir, [], { env });
  t.after(() => serve.stop());
  await accepted(serve, dataDir, 'good1', good);

  const valid = JSON.parse(
    (await runCli(['sensor', 'show', 'good1', '--json', '--data-dir', dataDir], { env })).stdout,
  );
  assert.equal(valid.name, 'good1');
  await putBad('nokeys', {
    name: 'nokeys',
    description: '',
    timezone: null,
    status: 'active',
    created_at: valid.created_at,
    revoked_at: null,
  });
  await putBad('nulled', null);
  const good2 = await addSensorCli(dataDir, 'good2', [], env);
  await accepted(serve, dataDir, 'good2', good2);
  await accepted(serve, dataDir, 'good1', good);
  assert.equal(serve.child.exitCode, null, 'the collector is still running');
  const warns = serve.logs.filter((l) => String(l.msg).includes('not valid and skipped'));
  assert.ok(warns.length >= 1, JSON.stringify(serve.logs));
  assert.equal(warns.at(-1)?.level, 40);
  assert.deepEqual((warns.at(-1)?.rejected as { entry: string }[]).map((r) => r.entry).length, 2);

  // Restarted with the bad entries there, it serves at once.
  await serve.stop();
  serve = await spawnServe(dataDir, [], { env });
  await accepted(serve, dataDir, 'good1', good);

  const list = await runCli(['sensor', 'list', '--data-dir', dataDir], { env });
  assert.equal(list.code, 0, list.stderr);
  assert.ok(!list.stdout.includes('\u001b') && !list.stdout.includes('\u0007'), list.stdout);
  assert.match(list.stdout, /hq \?\]0;OWNED\?\?\[2J/);
  assert.match(list.stderr, /not valid and skipped/);

  const check = await runCli(['check', '--json', '--data-dir', dataDir, '--no-daemon'], { env });
  const registry = (
    JSON.parse(check.stdout) as { checks: { name: string; status: string; message: string }[] }
  ).checks.find((c) => c.name === 'registry');
  assert.equal(registry?.status, 'warn', check.stdout);
  assert.match(
    registry?.message ?? '',
    /2 entries are not a valid sensor.*keys is not a list.*not a JSON object/,
  );
}

test('files: a malformed entry in sensors.json is skipped and reported; the collector keeps serving', async (t) => {
  const dataDir = makeTempDir(t);
  await survives(t, dataDir, {}, async (_name, value) => {
    const path = join(dataDir, 'sensors.json');
    const data = JSON.parse(readFileSync(path, 'utf8')) as { sensors: unknown[] };
    data.sensors.push(value);
    writeFileSync(path, JSON.stringify(data));
  });
  // The CLI's next change keeps the entries it cannot read, as they were.
  const text = readFileSync(join(dataDir, 'sensors.json'), 'utf8');
  assert.match(text, /"nokeys"/);
  assert.match(text, /null/);
});

test('NATS: a malformed value in the registry bucket is skipped and reported; every collector keeps serving', async (t) => {
  const nats = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: nats.url };
  const nc = await connect({ servers: nats.url });
  t.after(() => nc.close());
  await survives(t, dataDir, env, async (name, value) => {
    const kv = await new Kvm(nc).open('threatcol_sensors');
    await kv.put(encodeToken(name), JSON.stringify(value));
  });
});
