// The `outputs` commands and `check` against a real daemon and a loopback webhook: test, dead-letter (list and
// --retry), forget, and an output's warning in `check`.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

test('outputs test, dead-letter, --retry, forget and the check line, against a real daemon', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({ refuse: (threat) => threat === 'poison' });
  t.after(() => receiver.close());
  const config = join(dir, 'config.json');
  const hook = { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 20 }, retryMaxMs: 1000 };
  writeFileSync(config, JSON.stringify({ outputs: { hook } }));
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir, '--config', config]);

  const tested = await cli('outputs', 'test', 'hook');
  assert.equal(tested.code, 0, tested.stderr);
  assert.match(tested.stdout, /the receiver took the sample record/);
  const sample = JSON.parse(receiver.bodies[0]?.body ?? '{}') as { records: { sensor: string }[] };
  assert.equal(sample.records[0]?.sensor, 'threatcol-test');
  receiver.mode = 'down';
  const failed = await cli('outputs', 'test', 'hook');
  assert.equal(failed.code, 69);
  assert.match(failed.stderr, /OUTPUT_FAILED: output hook \(webhook\): .*HTTP 503/);
  assert.equal((await cli('outputs', 'test', 'nope')).code, 65);
  receiver.mode = 'up';

  const key = await addSensorCli(dir, 'fw');
  const serve = await spawnServe(dir, ['--config', config]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const reply = await post(serve.url, '/generic', [genericRecord({ threat: 'poison' })], {
    agent,
    sensor: 'fw',
    key,
  });
  assert.equal(reply.status, 200);
  const [id] = (reply.json as { ids: string[] }).ids;
  const deadFile = join(dir, 'outputs', 'hook.dead-letter.ndjson');
  await until(() => {
    try {
      return readFileSync(deadFile, 'utf8').includes(id as string);
    } catch {
      return false;
    }
  }, OUTPUTS_THREAD_MS);
  const listed = await cli('outputs', 'dead-letter', 'hook', '--json');
  assert.equal(listed.code, 0, listed.stderr);
  const letters = JSON.parse(listed.stdout) as { answer: string; record: { id: string } }[];
  assert.deepEqual(
    letters.map((l) => l.record.id),
    [id],
  );
  assert.match(letters[0]?.answer ?? '', /^HTTP 400: record refused/);

  // Refused again: it stays; taken: it leaves the file.
  const again = await cli('outputs', 'dead-letter', 'hook', '--retry');
  assert.equal(again.code, 69);
  assert.equal(readFileSync(deadFile, 'utf8').split('\n').filter(Boolean).length, 1);
  receiver.refuse = () => false;
  const retried = await cli('outputs', 'dead-letter', 'hook', '--retry');
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal(receiver.accepted.get(id as string), 1);
  assert.equal(existsSync(deadFile) ? readFileSync(deadFile, 'utf8') : '', '');
  assert.match((await cli('outputs', 'dead-letter', 'hook')).stdout, /No dead letters for output hook/);

  // A paused output is a warning in check, not a failure.
  receiver.mode = 'unauthorized';
  await post(serve.url, '/generic', [genericRecord({ threat: 'late' })], { agent, sensor: 'fw', key });
  const admin = new URL(serve.adminUrl as string).host;
  await until(
    async () => {
      const c = await cli(
        'check',
        '--json',
        '--admin-listen',
        admin,
        '--port',
        String(serve.port),
        '--host',
        '127.0.0.1',
      );
      const line = (JSON.parse(c.stdout) as { checks: { name: string; status: string }[] }).checks.find(
        (x) => x.name === 'output hook',
      );
      return line?.status === 'warn';
    },
    15_000,
    'check warns about the paused output',
  );

  // Without a daemon, list reads the positions from the store: state "stopped".
  await serve.stop();
  const offline = await cli('outputs', 'list', '--json', '--admin-listen', admin);
  assert.equal(offline.code, 0, offline.stderr);
  const listed2 = JSON.parse(offline.stdout) as {
    source: string;
    outputs: { name: string; state: string; position: { lagRecords: number } | null }[];
  };
  assert.equal(listed2.source, 'files');
  assert.deepEqual(
    listed2.outputs.map((o) => [o.name, o.state]),
    [['hook', 'stopped']],
  );
  assert.equal(listed2.outputs[0]?.position?.lagRecords, 1, 'the record the paused output did not send');
  const table = await cli('outputs', 'list', '--admin-listen', admin);
  assert.match(table.stdout, /^NAME\s+TYPE\s+STATE/);
  assert.match(table.stdout, /no daemon answered/);

  // Forget: the position goes; a second forget finds none.
  writeFileSync(config, JSON.stringify({ outputs: {} }));
  const forgot = await cli('outputs', 'forget', 'hook');
  assert.equal(forgot.code, 0, forgot.stderr);
  const second = await cli('outputs', 'forget', 'hook');
  assert.equal(second.code, 65);
  assert.match(second.stderr, /OUTPUT_NOT_FOUND/);
});
