// A record is dead-lettered once, even when `serve` dies after writing a batch's dead letters and before its
// position moved: the batch is sent again, refused again, and not written twice (docs/operations.md, Outputs).
// strace holds every rename for a while, the cursor's atomic write included: the kill lands in that window. On
// NATS the batch comes back after newer ones: the real forwarder and a real nats-server show that too.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { startForwarder } from '../../src/outputs/forwarder.js';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import type { OutputCursors, Store } from '../../src/store/store.js';
import { spawnServe } from '../helpers/cli.js';
import { natsBackend } from '../helpers/nats-server.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { slowRenames, straceMissing, tracedKiller } from '../helpers/slow-renames.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { record } from '../store/contract.js';
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

test('nats: a batch dead-lettered by a collector that died before its ack comes back behind newer batches: listed once', async (t) => {
  const receiver = await startReceiver({ refuse: (threat) => threat.startsWith('poison') });
  t.after(() => receiver.close());
  const hook = { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 50 }, startAt: 'oldest' };
  const { dataDir, config } = await natsBackend(t, { outputs: { hook } });
  const output = config.outputs.hook;
  assert.ok(output);
  const logger = pino({ level: 'silent' });
  const stores: Store[] = [];
  const open = async () => {
    const store = await openNatsStore(config, { logger, dataDir, outputAckWaitMs: 2000 });
    stores.push(store);
    return store;
  };
  const forwarders: ReturnType<typeof startForwarder>[] = [];
  const forward = (cursors: OutputCursors) => {
    const forwarder = startForwarder({
      name: 'hook',
      output,
      cursors,
      dataDir,
      owner: null,
      logger,
      env: {},
      now: Date.now,
    });
    forwarders.push(forwarder);
    return forwarder;
  };
  t.after(async () => {
    for (const f of forwarders) await f.stop();
    for (const s of stores.reverse()) await s.close();
  });
  const writer = await open();
  const log = await writer.openRecordLog();
  t.after(() => log.close());

  // The first collector dead-letters a refused batch and dies before its ack: the ack never answers.
  const dying = await open();
  let died: (error: Error) => void = () => {};
  const death = new Promise<never>((_, reject) => {
    died = reject;
  });
  death.catch(() => {});
  let acking = false;
  const first = forward({
    ...dying.outputs,
    async openFeed(options) {
      const feed = await dying.outputs.openFeed(options);
      return {
        close: () => feed.close(),
        async next(limits) {
          const batch = await feed.next(limits);
          return {
            records: batch.records,
            ack: () => {
              acking = true;
              return death;
            },
          };
        },
      };
    },
  });
  const refused = (await log.append([record({ threat: 'poison' }), record({ threat: 'fine' })])).ids;
  await until(() => acking, 30_000, 'the refused batch dead-lettered, its ack under way');
  assert.deepEqual(deadLetterIds(dataDir, 'hook'), refused);

  // The collector started again: newer records come first, while the dead one's batch waits out its ack wait.
  forward((await open()).outputs);
  const newer = (await log.append([record({ threat: 'later' })])).ids;
  await until(() => receiver.accepted.has(newer[0] as string), 30_000, 'the newer record delivered');
  await dying.close();
  died(new Error('killed'));
  await first.stop();

  // Sent again, refused again.
  await until(
    () => receiver.bodies.filter((b) => b.body.includes(refused[0] as string)).length === 2,
    30_000,
    'the dead collector’s batch handed over again',
  );
  await until(async () => (await writer.outputs.list())[0]?.lagRecords === 0, 30_000, 'the output passed it');
  assert.deepEqual(deadLetterIds(dataDir, 'hook'), refused, 'each refused record is listed once');
});
