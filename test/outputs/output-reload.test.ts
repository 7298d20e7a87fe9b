// Outputs while the daemon runs: a refused credential pauses the output and ingest goes on; SIGHUP retries it
// and applies a changed `outputs` section; a configuration that does not load leaves the outputs as they were.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

interface Report {
  name: string;
  state: string;
  lastError: string | null;
}

async function outputsOf(adminUrl: string): Promise<Report[]> {
  const response = await fetch(`${adminUrl}/api/outputs`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { outputs: Report[] }).outputs;
}

test('a refused token pauses the output, ingest goes on; SIGHUP retries it and reloads the outputs, as does a changed file', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const other = await startReceiver();
  t.after(() => other.close());
  receiver.mode = 'unauthorized';
  const config = join(dir, 'config.json');
  const tokenFile = join(dir, 'hook.token');
  writeFileSync(tokenFile, 'wrong-token\n');
  const hook = { type: 'webhook', url: receiver.url, tokenFile, batch: { maxWaitMs: 50 } };
  writeFileSync(config, JSON.stringify({ outputs: { hook } }));
  const key = await addSensorCli(dir, 'fw');
  const serve = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const as = { agent, sensor: 'fw', key };
  const admin = serve.adminUrl as string;

  assert.equal((await post(serve.url, '/generic', [genericRecord({ threat: 'one' })], as)).status, 200);
  await until(
    async () => (await outputsOf(admin))[0]?.state === 'paused',
    OUTPUTS_THREAD_MS,
    'the output pauses',
  );
  const [paused] = await outputsOf(admin);
  assert.match(paused?.lastError ?? '', /refused the credentials: HTTP 401/);
  assert.equal((await post(serve.url, '/generic', [genericRecord({ threat: 'two' })], as)).status, 200);
  assert.equal(receiver.accepted.size, 0);

  // The token is fixed and a second output added; SIGHUP retries at once (no 60 s wait) and starts the new one.
  receiver.mode = 'up';
  writeFileSync(
    config,
    JSON.stringify({ outputs: { hook, added: { type: 'webhook', url: other.url, startAt: 'oldest' } } }),
  );
  serve.child.kill('SIGHUP');
  await until(
    () => receiver.accepted.size === 2 && other.accepted.size === 2,
    OUTPUTS_THREAD_MS,
    'both outputs deliver',
  );
  assert.deepEqual(
    (await outputsOf(admin)).map((o) => [o.name, o.state]),
    [
      ['added', 'running'],
      ['hook', 'running'],
    ],
  );

  // The per-output series on /metrics. The receiver counts a batch when it arrives; the cursor moves after its
  // answer, so the lag reaches 0 a moment later.
  let metrics = '';
  await until(
    async () => {
      metrics = await (await fetch(`${admin}/metrics`)).text();
      return /^threatcol_output_lag_seconds\{output="added"\} 0$/m.test(metrics);
    },
    OUTPUTS_THREAD_MS,
    'the added output acknowledged',
  );
  assert.match(metrics, /^threatcol_output_records_sent_total\{output="added"\} 2$/m);
  assert.match(metrics, /^threatcol_output_batches_total\{output="hook"\} [1-9]/m);
  assert.match(metrics, /^threatcol_output_retries_total\{output="hook"\} [1-9]/m);
  assert.match(metrics, /^threatcol_output_lag_records\{output="hook"\} 0$/m);
  assert.match(metrics, /^threatcol_output_lag_seconds\{output="added"\} 0$/m);
  assert.match(metrics, /^threatcol_output_dead_letters_total\{output="hook"\} 0$/m);

  // A broken configuration on reload: refused, the outputs keep running as they were.
  writeFileSync(config, JSON.stringify({ outputs: { hook: { ...hook, bogus: 1 } } }));
  serve.child.kill('SIGHUP');
  await until(
    () => serve.logs.some((l) => String(l.msg).startsWith('configuration not reloaded')),
    OUTPUTS_THREAD_MS,
  );
  assert.equal((await post(serve.url, '/generic', [genericRecord({ threat: 'three' })], as)).status, 200);
  await until(
    () => receiver.accepted.size === 3 && other.accepted.size === 3,
    OUTPUTS_THREAD_MS,
    'both still deliver',
  );

  // Removed from the configuration, with no SIGHUP: the file watch applies it; stopped, its cursor kept.
  writeFileSync(config, JSON.stringify({ outputs: { hook } }));
  await until(
    async () => (await outputsOf(admin)).find((o) => o.name === 'added')?.state === 'removed',
    OUTPUTS_THREAD_MS,
  );
  assert.equal((await post(serve.url, '/generic', [genericRecord({ threat: 'four' })], as)).status, 200);
  await until(() => receiver.accepted.size === 4, OUTPUTS_THREAD_MS);
  assert.equal(other.accepted.size, 3, 'a removed output sends nothing');
});
