// `outputs replay` while the daemon is writing a batch's position: the replay wins, whichever write lands last
// (DESIGN 13). strace holds every rename of `serve` for a while, the cursor's atomic write included, and the
// replay runs inside that window: the daemon's write lands after it. And `outputs replay` of an idle output
// (everything delivered, nothing arriving): the daemon takes the new position within its poll interval, without
// waiting for a new record.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { genericRecord } from '../helpers/records.js';
import { slowRenames, straceMissing, tracedKiller } from '../helpers/slow-renames.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

test('outputs replay during the write of a batch position: the records are sent again', {
  skip: straceMissing,
}, async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const outputs = {
    hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 100 }, startAt: 'oldest' },
  };
  const { serve, config, post } = await serveWithOutputs(t, dir, outputs, slowRenames(4000));
  t.after(tracedKiller(serve));
  await post(Array.from({ length: 5 }, (_, i) => genericRecord({ threat: `t${i}` })));

  await until(() => receiver.accepted.size === 5, 30_000, 'the batch delivered');
  const cursor = join(dir, 'outputs', 'hook.cursor.json');
  assert.equal(JSON.parse(readFileSync(cursor, 'utf8')).lastId, null, 'its position is still being written');
  await replayHook(dir, config);
  assert.equal(
    JSON.parse(readFileSync(cursor, 'utf8')).lastId,
    null,
    'the replay ran before that write landed',
  );

  await everyRecordTwice(receiver, 'every record sent again after the replay');
});

test('outputs replay of an idle output: the records are sent again with no new record posted', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const outputs = {
    hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 100 }, startAt: 'oldest' },
  };
  const { config, post } = await serveWithOutputs(t, dir, outputs);
  await post(Array.from({ length: 5 }, (_, i) => genericRecord({ threat: `t${i}` })));
  await until(() => receiver.accepted.size === 5, 30_000, 'the batch delivered');
  // Idle for a few poll intervals, so the feed is waiting for new records when the replay comes.
  await new Promise((r) => setTimeout(r, 1500));
  await replayHook(dir, config);
  await everyRecordTwice(receiver, 'every record sent again after the replay, with nothing new posted');
  assert.equal(receiver.accepted.size, 5);
});

async function replayHook(dir: string, config: string): Promise<void> {
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
}

async function everyRecordTwice(receiver: { accepted: Map<string, number> }, what: string): Promise<void> {
  await until(() => [...receiver.accepted.values()].every((n) => n === 2), 30_000, what);
}
