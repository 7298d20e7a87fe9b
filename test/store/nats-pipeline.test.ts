// The NATS record writer on a real nats-server: many requests' records in flight at once, each stored once
// under its own Nats-Msg-Id; a record NATS refuses fails its request at once (503), not after the timeout;
// records published while no stream listens are published again and stored once it does; a request answered
// 503 while its publishes were on the wire, and stored after all, or after part of it was stored, is stored
// once when its sender retries.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import type { Config } from '../../src/config/schema.js';
import { recordsStreamConfig, SENDER_RETRY_S } from '../../src/store/nats/nats-setup.js';
import { openStore } from '../../src/store/open-store.js';
import type { RecordLog, Store } from '../../src/store/store.js';
import { type NatsNode, natsBackend, readStream } from '../helpers/nats-server.js';
import { stopProcess } from '../helpers/stop-process.js';
import { until } from '../helpers/until.js';
import { record } from './contract.js';

const PUBLISH_TIMEOUT_MS = 5000;

async function setUp(
  t: { after(fn: () => unknown): void },
  beforeOpen?: (config: Config, node: NatsNode) => Promise<void>,
  overrides: Record<string, unknown> = {},
): Promise<{ config: Config; node: NatsNode; store: Store; log: RecordLog }> {
  const { node, dataDir, config } = await natsBackend(t, {
    'nats.publishTimeoutMs': PUBLISH_TIMEOUT_MS,
    'dedupe.windowSeconds': 120,
    ...overrides,
  });
  await beforeOpen?.(config, node);
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  await until(async () => (await store.health()).ok, 20_000, 'store healthy', 100);
  const log = await store.openRecordLog();
  t.after(async () => {
    await log.close();
    await store.close();
  });
  return { config, node, store, log };
}

async function withManager<T>(
  node: NatsNode,
  fn: (jsm: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>,
) {
  const nc = await connect({ servers: [node.url] });
  try {
    return await fn(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}

test('NATS writer: 20 requests of 100 records in flight at once are each stored once, under their own message ids', async (t) => {
  const { config, node, log } = await setUp(t);
  const batches = Array.from({ length: 20 }, (_, b) =>
    Array.from({ length: 100 }, (_, i) => record({ threat: `p-${b}-${i}` })),
  );
  // Even requests carry dedupe keys (the message id is the key), odd ones none (the message id is the record id).
  const keysOf = (b: number) =>
    b % 2 === 0 ? batches[b]?.map((_, i) => `key-${b}-${i}-aaaaaaaaaaaaaa`) : undefined;
  const results = await Promise.all(
    batches.map((batch, b) => {
      const keys = keysOf(b);
      return log.append(batch, keys ? { dedupeKeys: keys } : {});
    }),
  );
  for (const [b, r] of results.entries()) {
    assert.deepEqual(r, { ids: batches[b]?.map((x) => x.id), duplicates: 0 });
  }

  const stored = await readStream([node.url], config.nats.stream);
  assert.equal(stored.length, 2000, 'one message per record');
  const ids = stored.map((m) => (JSON.parse(m.text) as { id: string }).id);
  assert.deepEqual(new Set(ids), new Set(batches.flat().map((r) => r.id)), 'every record, once');
  // The message id a retry would carry: the key when there is one, else the record id.
  await withManager(node, async (jsm) => {
    for (const seq of [1, 777, 2000]) {
      const msg = await jsm.streams.getMessage(config.nats.stream, { seq });
      const id = (msg?.json() as { id: string }).id;
      const b = batches.findIndex((batch) => batch.some((r) => r.id === id));
      const i = batches[b]?.findIndex((r) => r.id === id) ?? -1;
      assert.equal(msg?.header.get('Nats-Msg-Id'), keysOf(b)?.[i] ?? id, `message ${seq}`);
    }
  });

  // A sender's retry of a keyed request: nothing stored again, the first ids answered.
  const retried = batches[4]?.map((r) => ({ ...r, id: record().id })) ?? [];
  const again = await log.append(retried, { dedupeKeys: keysOf(4) as string[] });
  assert.deepEqual(again, { ids: batches[4]?.map((r) => r.id), duplicates: 100 });
  assert.equal((await readStream([node.url], config.nats.stream)).length, 2000);
});

test('NATS writer: a record NATS refuses fails its request at once with 503; a concurrent request is stored', async (t) => {
  const { config, node, log } = await setUp(t, (config, node) =>
    // The stream made beforehand with a small message size limit (serve leaves an existing stream's limit).
    withManager(node, (jsm) => jsm.streams.add({ ...recordsStreamConfig(config), max_msg_size: 4096 })).then(
      () => undefined,
    ),
  );
  const started = Date.now();
  const [refused, fine] = await Promise.allSettled([
    log.append([
      record({ threat: 'small-1' }),
      record({ threat: 'x'.repeat(8000) }),
      record({ threat: 'small-2' }),
    ]),
    log.append([record({ threat: 'ok-1' }), record({ threat: 'ok-2' })]),
  ]);
  const tookMs = Date.now() - started;
  assert.equal(refused.status, 'rejected');
  const error = (refused as PromiseRejectedResult).reason as {
    code: string;
    status: number;
    message: string;
  };
  assert.equal(error.code, 'UNAVAILABLE');
  assert.match(error.message, /NATS refused the record/);
  assert.ok(tookMs < PUBLISH_TIMEOUT_MS / 2, `answered after ${tookMs} ms, not at the timeout`);
  assert.equal(fine.status, 'fulfilled');
  const threats = (await readStream([node.url], config.nats.stream)).map((m) => JSON.parse(m.text).threat);
  assert.ok(threats.includes('ok-1') && threats.includes('ok-2'), threats.join(' '));
  assert.ok(!threats.some((x: string) => x.startsWith('xxx')), 'the refused record is not stored');
});

test('NATS writer: records published while no stream listens are published again and stored once it does', async (t) => {
  const { config, node, log } = await setUp(t);
  await withManager(node, (jsm) => jsm.streams.delete(config.nats.stream));
  const batch = Array.from({ length: 50 }, (_, i) => record({ threat: `late-${i}` }));
  const pending = log.append(batch);
  // Not a wait for an event but the scenario itself: a gap without a stream, every publish answered "no
  // responders" and tried again every 150 ms, well within the publish timeout.
  await new Promise((resolve) => setTimeout(resolve, 600));
  await withManager(node, (jsm) => jsm.streams.add(recordsStreamConfig(config)));
  assert.deepEqual(await pending, { ids: batch.map((r) => r.id), duplicates: 0 });
  const stored = await readStream([node.url], config.nats.stream);
  assert.deepEqual(
    stored.map((m) => JSON.parse(m.text).id).sort(),
    batch.map((r) => r.id).sort(),
    'each record once',
  );
});

test('NATS writer: a 503 in doubt (the server stalled with the publishes on the wire) is stored once when retried', async (t) => {
  const timeoutMs = 1500;
  const { config, node, log } = await setUp(t, undefined, {
    'dedupe.windowSeconds': 0,
    'nats.publishTimeoutMs': timeoutMs,
  });
  const info = await withManager(node, (jsm) => jsm.streams.info(config.nats.stream));
  assert.ok(
    info.config.duplicate_window >= (timeoutMs / 1000 + SENDER_RETRY_S) * 1e9,
    `the duplicate window (${info.config.duplicate_window} ns) covers a retry after the 503`,
  );
  // Generic records without a dedupe key: the message id is all that recognises a retry.
  const batch = Array.from({ length: 5 }, (_, i) => record({ threat: `doubt-${i}` }));
  // Stopped for good before the append: a thread still running after kill() could store and ack the publishes.
  await stopProcess(node.pid as number);
  let resumed = false;
  t.after(() => {
    if (!resumed) process.kill(node.pid as number, 'SIGCONT');
  });
  await assert.rejects(log.append(batch), (error: { code?: string }) => error.code === 'UNAVAILABLE');
  // The server wakes up and stores what was on the wire: the 503 was in doubt.
  process.kill(node.pid as number, 'SIGCONT');
  resumed = true;
  await until(
    async () => (await readStream([node.url], config.nats.stream)).length === 5,
    20_000,
    'the stalled publishes stored',
    100,
  );

  // The sender retries: the same body builds new records (new ids, a later received_at).
  const retried = batch.map((r) => ({ ...r, id: record().id, received_at: new Date().toISOString() }));
  assert.deepEqual(await log.append(retried), { ids: batch.map((r) => r.id), duplicates: 5 });
  const stored = await readStream([node.url], config.nats.stream);
  assert.deepEqual(
    stored.map((m) => JSON.parse(m.text).id).sort(),
    batch.map((r) => r.id).sort(),
    'once each',
  );

  // The same body again, with no 503 in doubt before it, is a new delivery (dedupe off): stored.
  const anew = batch.map((r) => ({ ...r, id: record().id }));
  assert.deepEqual(await log.append(anew), { ids: anew.map((r) => r.id), duplicates: 0 });
  assert.equal((await readStream([node.url], config.nats.stream)).length, 10);
});

test('NATS writer: a 503 after part of the request was stored is retried without storing that part twice', async (t) => {
  const { config, node, log } = await setUp(
    t,
    (config, node) =>
      withManager(node, (jsm) =>
        jsm.streams.add({ ...recordsStreamConfig(config), max_msg_size: 4096 }),
      ).then(() => undefined),
    { 'dedupe.windowSeconds': 0 },
  );
  // Generic records without a dedupe key: the message id is all that recognises a retry. NATS stores the
  // small one and refuses the big one: 503, with the small one in the stream.
  const batch = [record({ threat: 'small' }), record({ threat: 'x'.repeat(8000) })];
  await assert.rejects(log.append(batch), (error: { code?: string }) => error.code === 'UNAVAILABLE');
  const threats = async () =>
    (await readStream([node.url], config.nats.stream)).map((m) => JSON.parse(m.text).threat as string);
  assert.deepEqual(await threats(), ['small']);

  // The sender retries: the same body builds new records (new ids, a later received_at).
  const retried = batch.map((r) => ({ ...r, id: record().id, received_at: new Date().toISOString() }));
  await assert.rejects(log.append(retried), (error: { code?: string }) => error.code === 'UNAVAILABLE');
  assert.deepEqual(await threats(), ['small'], 'the small one once');
});
