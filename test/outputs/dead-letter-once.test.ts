// A record is dead-lettered once, even when `serve` dies after writing a batch's dead letters and before its
// position moved: the batch is sent again, refused again, and not written twice (docs/operations.md, Outputs).
// strace holds every rename for a while, the cursor's atomic write included: the kill lands in that window.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

const straceMissing = spawnSync('strace', ['-V']).status !== 0 ? 'strace is not installed' : false;

const lines = (path: string): string[] => {
  try {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

test('dead letters written, then kill -9 before the position moved: each refused record is listed once', {
  skip: straceMissing,
}, async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({ refuse: (threat) => threat.startsWith('poison') });
  t.after(() => receiver.close());
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      outputs: {
        hook: {
          type: 'webhook',
          url: receiver.url,
          batch: { maxRecords: 10, maxWaitMs: 100 },
          startAt: 'oldest',
        },
      },
    }),
  );
  const key = await addSensorCli(dir, 'fw');
  const slowRenames = [
    'strace',
    '-f',
    '-qq',
    '-o',
    '/dev/null',
    '-e',
    'trace=rename',
    '-e',
    'inject=rename:delay_enter=1500000',
  ];
  let serve = await spawnServe(dir, ['--config', config], { prefix: slowRenames, timeoutMs: 60_000 });
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const records = Array.from({ length: 5 }, (_, i) =>
    genericRecord({ threat: i === 2 ? 'poison' : `t${i}` }),
  );
  assert.equal((await post(serve.url, '/generic', records, { agent, sensor: 'fw', key })).status, 200);
  const ids = readStored(dir).map((r) => r.id as string);

  const deadLetters = join(dir, 'outputs', 'hook.dead-letter.ndjson');
  const cursor = join(dir, 'outputs', 'hook.cursor.json');
  await until(() => lines(deadLetters).length === ids.length, 30_000, 'the refused batch dead-lettered');
  // The serve process is strace's child: killing strace would leave it running, untraced.
  const children = `/proc/${serve.child.pid}/task/${serve.child.pid}/children`;
  process.kill(Number(readFileSync(children, 'utf8').trim().split(' ')[0]), 'SIGKILL');
  await serve.exited;
  assert.equal(JSON.parse(readFileSync(cursor, 'utf8')).lastId, null, 'killed before the position moved');

  serve = await spawnServe(dir, ['--config', config]);
  await until(
    () => JSON.parse(readFileSync(cursor, 'utf8')).lastId === ids.at(-1),
    30_000,
    'the batch passed',
  );
  assert.equal(receiver.bodies.length, 2, 'the batch was sent again after the kill, and refused again');
  const listed = lines(deadLetters).map((l) => (JSON.parse(l) as { record: { id: string } }).record.id);
  assert.deepEqual(listed, ids, 'each refused record is dead-lettered once');
});
