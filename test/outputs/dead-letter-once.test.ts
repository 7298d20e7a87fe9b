// A record is dead-lettered once, even when `serve` dies after writing a batch's dead letters and before its
// position moved: the batch is sent again, refused again, and not written twice (docs/operations.md, Outputs).
// strace holds every rename for a while, the cursor's atomic write included: the kill lands in that window.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { spawnServe } from '../helpers/cli.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { slowRenames, straceMissing, tracedKiller } from '../helpers/slow-renames.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { deadLetterIds } from './kill-twice.js';
import { serveWithOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

test('dead letters written, then kill -9 before the position moved: each refused record is listed once', {
  skip: straceMissing,
}, async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({ refuse: (threat) => threat.startsWith('poison') });
  t.after(() => receiver.close());
  const outputs = {
    hook: {
      type: 'webhook',
      url: receiver.url,
      batch: { maxRecords: 10, maxWaitMs: 100 },
      startAt: 'oldest',
    },
  };
  const first = await serveWithOutputs(t, dir, outputs, slowRenames(1500));
  const kill = tracedKiller(first.serve);
  t.after(kill);
  await first.post(
    Array.from({ length: 5 }, (_, i) => genericRecord({ threat: i === 2 ? 'poison' : `t${i}` })),
  );
  const ids = readStored(dir).map((r) => r.id as string);

  const cursor = join(dir, 'outputs', 'hook.cursor.json');
  await until(
    () => deadLetterIds(dir, 'hook').length === ids.length,
    30_000,
    'the refused batch dead-lettered',
  );
  kill();
  await first.serve.exited;
  assert.equal(JSON.parse(readFileSync(cursor, 'utf8')).lastId, null, 'killed before the position moved');

  const serve = await spawnServe(dir, ['--config', first.config]);
  t.after(() => serve.stop('SIGKILL'));
  await until(
    () => JSON.parse(readFileSync(cursor, 'utf8')).lastId === ids.at(-1),
    30_000,
    'the batch passed',
  );
  assert.equal(receiver.bodies.length, 2, 'the batch was sent again after the kill, and refused again');
  assert.deepEqual(deadLetterIds(dir, 'hook'), ids, 'each refused record is dead-lettered once');
});

test('a dead-letter file left with a torn last line (a power cut mid-append): the next dead letters are whole', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({ refuse: () => true });
  t.after(() => receiver.close());
  mkdirSync(join(dir, 'outputs'), { recursive: true });
  writeFileSync(join(dir, 'outputs', 'hook.dead-letter.ndjson'), '{"at":"2026-11-26T00:00:00.000Z","answ');
  const outputs = {
    hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 100 }, startAt: 'oldest' },
  };
  const { post, deadLetters } = await serveWithOutputs(t, dir, outputs);
  await post(Array.from({ length: 3 }, (_, i) => genericRecord({ threat: `t${i}` })));
  const ids = readStored(dir).map((r) => r.id as string);
  await until(() => receiver.refused.size === 3, 30_000, 'the batch refused');
  await until(
    async () => (await deadLetters('hook')).length >= 3,
    OUTPUTS_THREAD_MS,
    'three dead letters listed',
  );
  assert.deepEqual(
    (await deadLetters('hook')).map((l) => l.record.id),
    ids,
    'the torn line stays alone, skipped',
  );
});
