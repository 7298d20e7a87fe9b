// `outputs replay` while the daemon is writing a batch's position: the replay wins, whichever write lands last
// (DESIGN 13). strace holds every rename of `serve` for a while, the cursor's atomic write included, and the
// replay runs inside that window: the daemon's write lands after it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

const straceMissing = spawnSync('strace', ['-V']).status !== 0 ? 'strace is not installed' : false;

test('outputs replay during the write of a batch position: the records are sent again', {
  skip: straceMissing,
}, async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      outputs: { hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 100 }, startAt: 'oldest' } },
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
    'inject=rename:delay_enter=4000000',
  ];
  const serve = await spawnServe(dir, ['--config', config], { prefix: slowRenames, timeoutMs: 60_000 });
  t.after(async () => {
    // The serve process is strace's child: killing strace alone would leave it running, untraced.
    const children = `/proc/${serve.child.pid}/task/${serve.child.pid}/children`;
    try {
      process.kill(Number(readFileSync(children, 'utf8').trim().split(' ')[0]), 'SIGKILL');
    } catch {}
    await serve.stop('SIGKILL');
  });
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const records = Array.from({ length: 5 }, (_, i) => genericRecord({ threat: `t${i}` }));
  assert.equal((await post(serve.url, '/generic', records, { agent, sensor: 'fw', key })).status, 200);

  await until(() => receiver.accepted.size === 5, 30_000, 'the batch delivered');
  const cursor = join(dir, 'outputs', 'hook.cursor.json');
  assert.equal(JSON.parse(readFileSync(cursor, 'utf8')).lastId, null, 'its position is still being written');
  const replay = await runCli([
    'outputs',
    'replay',
    'hook',
    '--since',
    '1h',
    '--data-dir',
    dir,
    '--config',
    config,
  ]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.equal(
    JSON.parse(readFileSync(cursor, 'utf8')).lastId,
    null,
    'the replay ran before that write landed',
  );

  await until(
    () => [...receiver.accepted.values()].every((n) => n === 2),
    30_000,
    'every record sent again after the replay',
  );
});
