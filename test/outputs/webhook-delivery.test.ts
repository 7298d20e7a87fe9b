// Outputs end to end through the real binary (DESIGN 13): a loopback webhook that is down, slow and refusing,
// `serve` killed -9 twice while forwarding; every matching record arrives at least once, none is skipped.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

const RECORDS = 10_000;
const PER_REQUEST = 1000;
const MAX_BATCH = 200;
const isPoison = (threat: string) => threat.startsWith('poison');

function writeConfig(dir: string, outputs: Record<string, unknown>): string {
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify({ outputs }));
  return path;
}

test('webhook: 10,000 records through a receiver down, then slow and refusing, with two kill -9: none skipped', async (t) => {
  const dir = makeTempDir(t);
  const secret = 'test-secret-0123456789';
  writeFileSync(join(dir, 'hook.secret'), `${secret}\n`);
  const receiver = await startReceiver({ secret, refuse: isPoison });
  t.after(() => receiver.close());
  receiver.mode = 'down';
  const config = writeConfig(dir, {
    hook: {
      type: 'webhook',
      url: receiver.url,
      secretFile: join(dir, 'hook.secret'),
      filter: { minCriticality: 2 },
      batch: { maxRecords: MAX_BATCH, maxWaitMs: 100 },
      retryMaxMs: 1000,
      startAt: 'oldest',
    },
  });
  const key = await addSensorCli(dir, 'fw');
  let serve: ServeProcess = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));

  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  for (let start = 0; start < RECORDS; start += PER_REQUEST) {
    const body = Array.from({ length: PER_REQUEST }, (_, j) => {
      const i = start + j;
      const poison = i % 2500 === 1234;
      return genericRecord({ threat: poison ? `poison-${i}` : `t${i}`, criticality: poison ? 4 : i % 5 });
    });
    const reply = await post(serve.url, '/generic', body, { agent, sensor: 'fw', key });
    assert.equal(reply.status, 200, 'ingest never waits for an output that is down');
  }
  const stored = readStored(dir);
  assert.equal(stored.length, RECORDS);
  const matching = new Set(stored.filter((r) => (r.criticality as number) >= 2).map((r) => r.id as string));

  await until(() => serve.logs.some((l) => l.msg === 'output delivery failed; retrying'), 10_000);
  assert.equal(receiver.accepted.size, 0);
  receiver.mode = 'up';
  receiver.delayMs = 30;
  for (const threshold of [1500, 3500]) {
    await until(() => receiver.accepted.size >= threshold, 30_000);
    serve.child.kill('SIGKILL');
    await serve.exited;
    serve = await spawnServe(dir, ['--config', config]);
  }
  const deadLetterFile = join(dir, 'outputs', 'hook.dead-letter.ndjson');
  const deadIds = () => {
    try {
      return readFileSync(deadLetterFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { record: { id: string } }).record.id);
    } catch {
      return [];
    }
  };
  await until(() => {
    const dead = new Set(deadIds());
    return [...matching].every((id) => receiver.accepted.has(id) || dead.has(id));
  }, 60_000);

  const dead = deadIds();
  const deadSet = new Set(dead);
  const byId = new Map(stored.map((r) => [r.id as string, r]));
  for (const id of receiver.accepted.keys())
    assert.ok(matching.has(id), 'only records the filter takes are sent');
  for (const id of dead)
    assert.ok(receiver.refused.has(id), 'a dead letter is a record the receiver refused');
  for (const r of stored.filter((r) => isPoison(r.threat as string))) {
    assert.ok(deadSet.has(r.id as string), 'every refused record is dead-lettered');
    assert.ok(!receiver.accepted.has(r.id as string));
  }
  for (const id of matching)
    assert.ok(receiver.accepted.has(id) || deadSet.has(id), `record ${id} was skipped`);
  const duplicates = [...receiver.accepted.values()].reduce((sum, n) => sum + n - 1, 0);
  t.diagnostic(
    `matching ${matching.size}, delivered ${receiver.accepted.size}, dead letters ${dead.length}, duplicate deliveries ${duplicates}`,
  );
  assert.ok(
    duplicates <= 2 * MAX_BATCH,
    `at most the batch in flight at each kill is sent again (${duplicates})`,
  );
  assert.equal(receiver.badSignatures, 0, 'every body carries a valid X-Threatcol-Signature');
  assert.ok(receiver.bodies.every((b) => typeof b.headers['idempotency-key'] === 'string'));
  assert.ok(dead.every((id) => byId.get(id)?.criticality !== undefined));

  // The state is visible from the daemon while it runs.
  const admin = new URL(serve.adminUrl as string).host;
  const list = await runCli([
    'outputs',
    'list',
    '--json',
    '--data-dir',
    dir,
    '--config',
    config,
    '--admin-listen',
    admin,
  ]);
  assert.equal(list.code, 0, list.stderr);
  const [hook] = JSON.parse(list.stdout).outputs as {
    name: string;
    state: string;
    position: { lagRecords: number };
  }[];
  assert.equal(hook?.name, 'hook');
  assert.equal(hook?.state, 'running');
  assert.equal(hook?.position.lagRecords, 0);
});

test('a malformed output stops serve with 78, naming the output and the key', async (t) => {
  const dir = makeTempDir(t);
  const config = writeConfig(dir, {
    oncall: { type: 'webhook', url: 'http://127.0.0.1:9/x', fromat: 'slack' },
  });
  const result = await runCli([
    'serve',
    '--data-dir',
    dir,
    '--config',
    config,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
  ]);
  assert.equal(result.code, 78);
  assert.match(
    result.stderr,
    /outputs\.oncall\.fromat: unknown key of the webhook output "oncall" \(did you mean format\?\)/,
  );
  const unknownType = writeConfig(dir, { siem: { type: 'splunk', url: 'https://x' } });
  const second = await runCli(['serve', '--data-dir', dir, '--config', unknownType, '--port', '0']);
  assert.equal(second.code, 78);
  assert.match(second.stderr, /outputs\.siem\.type: must be one of/);
});
