// `outputs replay` while the output is idle (everything delivered, nothing arriving): the running daemon takes the
// new position within its poll interval and sends the records again, without waiting for a new record.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

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
  await until(
    () => [...receiver.accepted.values()].every((n) => n === 2),
    30_000,
    'every record sent again after the replay, with nothing new posted',
  );
  assert.equal(receiver.accepted.size, 5);
});
