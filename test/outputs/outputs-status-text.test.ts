// Black box: what `outputs test` and `outputs list` tell a user about an output's failures: the catalogue's code
// and message (never an internal class name), the last error with its time and, once deliveries succeed
// again, "since recovered"; "none since start" where the daemon has delivered nothing since it started.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

test('outputs test: a receiver that is down is OUTPUT_FAILED with the catalogue message, no class name', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.mode = 'down';
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ outputs: { hook: { type: 'webhook', url: receiver.url } } }));
  const r = await runCli(['outputs', 'test', 'hook', '--data-dir', dir, '--config', config]);
  assert.equal(r.code, 69, r.stderr);
  assert.match(
    r.stderr,
    /^threatcol: OUTPUT_FAILED: output hook \(webhook\): the output could not deliver to its receiver: .*HTTP 503.* \(a temporary failure: the daemon sends again, backing off\)$/m,
  );
  assert.doesNotMatch(r.stderr, /DeliveryError/);
});

test('outputs list: the last error keeps its time and says "since recovered" after a delivery', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  receiver.mode = 'down';
  const served = await serveWithOutputs(t, dir, {
    hook: { type: 'webhook', url: receiver.url, retryMaxMs: 1000, batch: { maxWaitMs: 20 } },
  });
  const admin = new URL(served.serve.adminUrl as string).host;
  const list = async () => {
    const args = ['outputs', 'list', '--data-dir', dir, '--config', served.config, '--admin-listen', admin];
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n').find((l) => l.startsWith('hook ')) ?? '';
  };
  assert.match(await list(), /none since start/, 'nothing delivered since this daemon started');
  await served.post([genericRecord({ threat: 'while down' })]);
  let row = '';
  await until(
    async () => {
      row = await list();
      return /HTTP 503/.test(row);
    },
    60_000,
    'the failure listed',
  );
  assert.match(row, /\d{4}-\d\d-\d\dT[\d:.]+Z: .*HTTP 503/);
  assert.doesNotMatch(row, /since recovered/);
  receiver.mode = 'up';
  await until(
    async () => {
      row = await list();
      return /since recovered/.test(row);
    },
    60_000,
    'the error marked recovered after a delivery',
  );
  assert.match(row, /\d{4}-\d\d-\d\dT[\d:.]+Z: .*HTTP 503.*\(since recovered\)/);
  assert.equal(receiver.accepted.size, 1);
});
