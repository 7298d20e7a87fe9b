// Outputs on the NATS backend, against a real nats-server (JetStream, temp store dir, free loopback port): the
// shared output feed contract, then what only a shared consumer shows: collectors splitting an output's work,
// a dead collector's batch redelivered, retention skipping records counted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import type { RecordLine, Store } from '../../src/store/store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { until } from '../helpers/until.js';
import { record } from './contract.js';
import { nextBatch, runOutputContract } from './output-contract.js';

const ACK_WAIT_MS = 1000;

/** Waits until the store would accept an append (nats-contract.test.ts has the same; importing it runs its suite). */
async function untilHealthy(store: Store, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const health = await store.health();
    if (health.ok) return;
    if (Date.now() > deadline) throw new Error(`store not healthy: ${health.reason}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function natsStores(t: { after(fn: () => unknown): void }, overrides: Record<string, unknown> = {}) {
  const { node, dataDir, config } = await natsBackend(t, overrides);
  const logger = pino({ level: 'silent' });
  const open = async (): Promise<Store> => {
    const store = await openNatsStore(config, { logger, dataDir, outputAckWaitMs: ACK_WAIT_MS });
    await untilHealthy(store);
    return store;
  };
  return { node, config, open };
}

runOutputContract(
  'nats',
  async (t, overrides) => {
    const { open } = await natsStores(t, overrides);
    const store = await open();
    return { store, open, cleanup: () => store.close() };
  },
  { retention: 'counted' },
);

const ids = (lines: readonly RecordLine[]) => lines.map((l) => l.record.id);

async function setUp(t: { after(fn: () => unknown): void }, overrides?: Record<string, unknown>) {
  const { node, config, open } = await natsStores(t, overrides);
  const stores: Store[] = [];
  t.after(async () => {
    for (const s of stores.reverse()) await s.close();
  });
  const collector = async () => {
    const store = await open();
    stores.push(store);
    return store;
  };
  const writer = await collector();
  const log = await writer.openRecordLog();
  t.after(() => log.close());
  const append = async (n: number, prefix: string, fields = {}) =>
    (await log.append(Array.from({ length: n }, (_, i) => record({ threat: `${prefix}${i}`, ...fields }))))
      .ids;
  return { node, config, collector, writer, append };
}

test('nats outputs: two collectors share an output; a batch held by one is never handed to the other', async (t) => {
  const { collector, append } = await setUp(t);
  const stored = await append(200, 'g');
  const a = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  const b = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => Promise.all([a.close(), b.close()]));
  const heldByA = await nextBatch(a, 10);
  const heldByB = await nextBatch(b, 10);
  assert.deepEqual(ids(heldByA.records), stored.slice(0, 10));
  assert.deepEqual(ids(heldByB.records), stored.slice(10, 20), 'B gets the next records, not A’s batch');
  await Promise.all([heldByA.ack(), heldByB.ack()]);

  const got: [string[], string[]] = [[], []];
  const total = () => got[0].length + got[1].length;
  await Promise.all(
    [a, b].map(async (feed, i) => {
      while (total() < 180) {
        const signal = AbortSignal.timeout(3000);
        const batch = await feed.next({ maxRecords: 10, maxBytes: 1 << 20, waitMs: 20, signal });
        got[i as 0 | 1].push(...ids(batch.records));
        await batch.ack();
      }
    }),
  );
  const all = [...ids(heldByA.records), ...ids(heldByB.records), ...got[0], ...got[1]];
  assert.deepEqual([...all].sort(), [...stored].sort(), 'every record once, none twice');
  assert.ok(got[0].length > 0 && got[1].length > 0, `shared: ${got[0].length} + ${got[1].length}`);
});

test('nats outputs: a dead collector’s unacknowledged batch goes to another; a live one’s is never redelivered', async (t) => {
  const { collector, append } = await setUp(t);
  const stored = await append(6, 'h');
  const live = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  const dying = await collector();
  const doomed = await dying.outputs.openFeed({ name: 'siem', startAt: 0 });
  const watcher = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => Promise.all([live.close(), watcher.close()]));
  const held = await nextBatch(live, 3);
  assert.deepEqual(ids(held.records), stored.slice(0, 3));
  const lost = await nextBatch(doomed, 3);
  assert.deepEqual(ids(lost.records), stored.slice(3));

  // Both hold their batches for three times ack_wait (a slow receiver): a third collector gets neither.
  const nothing = await watcher.next({
    maxRecords: 10,
    maxBytes: 1 << 20,
    waitMs: 50,
    signal: AbortSignal.timeout(ACK_WAIT_MS * 3),
  });
  assert.deepEqual(ids(nothing.records), [], 'held batches stay with their collectors');
  await held.ack();

  // One collector dies holding its batch (its connection closes; no ack, no hand-back).
  await dying.close();
  const redelivered = await nextBatch(watcher, 10);
  assert.deepEqual(ids(redelivered.records), stored.slice(3), 'redelivered after ack_wait, same ids');
  await redelivered.ack();
  const [position] = await (await collector()).outputs.list();
  assert.equal(position?.lagRecords, 0);
  assert.equal(position?.lastId, stored.at(-1));
});

test('nats outputs: records retention removes before an output passed them are counted as skipped, never silent', async (t) => {
  // store.retention.maxBytes is the stream's max_bytes: the smallest allowed keeps a handful of these records.
  const { node, config, collector, append } = await setUp(t, { 'store.retention.maxBytes': 4096 });
  const store = await collector();
  const feed = await store.outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => feed.close());
  const stored = await append(20, 'k', { original: { pad: 'x'.repeat(400) } });
  const nc = await connect({ servers: [node.url] });
  t.after(() => nc.close());
  const { state } = await (await jetstreamManager(nc)).streams.info(config.nats.stream);
  const gone = state.first_seq - 1;
  assert.ok(gone >= 10 && state.messages > 0, `retention kept ${state.messages} of 20`);

  const [stalled] = await store.outputs.list();
  assert.equal(stalled?.skippedRecords, gone, 'seen before the output moves');
  const batch = await nextBatch(feed, 100);
  assert.deepEqual(ids(batch.records), stored.slice(gone));
  await batch.ack();
  const [after] = await (await collector()).outputs.list();
  assert.equal(after?.skippedRecords, gone, 'kept once the consumer moved past them');
  assert.equal(after?.lagRecords, 0);
});

/** Four records stored, handed out in one batch by a collector's feed, then `outputs replay` to the start. */
async function replayWhileOut(t: { after(fn: () => unknown): void }, prefix: string) {
  const { collector, append } = await setUp(t);
  const stored = await append(4, prefix);
  const store = await collector();
  const feed = await store.outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => feed.close());
  const out = await nextBatch(feed, 10);
  assert.deepEqual(ids(out.records), stored);
  await store.outputs.replay('siem', 0);
  return { collector, stored, store, feed, out };
}

test('nats outputs: a replay while a batch is out: that batch’s ack does not move the replayed position', async (t) => {
  const { stored, store, feed, out } = await replayWhileOut(t, 'm');
  // The consumer made again answers the old batch's acks (or, between delete and create, nobody does).
  await out.ack().catch((error: { code?: string }) => assert.equal(error.code, 'UNAVAILABLE'));
  const replayed = await nextBatch(feed, 10);
  assert.deepEqual(ids(replayed.records), stored, 'from the replay’s start');
  await replayed.ack();
  const [position] = await store.outputs.list();
  assert.equal(position?.lagRecords, 0);
});

test('nats outputs: a batch out before a replay, acked after the replayed consumer handed its records out again: they still come again', async (t) => {
  const { collector, stored, out: old } = await replayWhileOut(t, 'r');
  // Another collector takes the replayed records; then the old batch's receiver answers and it is acked.
  const b = await collector();
  const feedB = await b.outputs.openFeed({ name: 'siem', startAt: 0 });
  const replayed = await nextBatch(feedB, 10);
  assert.deepEqual(ids(replayed.records), stored);
  await old.ack().catch(() => {}); // whether NATS confirms it or not: it must not settle the replayed delivery
  // That collector dies before its receiver took them: the replay's records must be handed over again.
  await feedB.close();
  const feedC = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => feedC.close());
  const again = await feedC.next({
    maxRecords: 10,
    maxBytes: 1 << 20,
    waitMs: 20,
    signal: AbortSignal.timeout(ACK_WAIT_MS * 5),
  });
  assert.deepEqual(ids(again.records), stored, 'the replayed records handed over again');
});

test('nats outputs: next() ends on its signal while NATS is down, without waiting out the publish timeout', async (t) => {
  // A publish timeout far beyond the guard below: only the abort can end next() in time.
  const { node, collector } = await setUp(t, { 'nats.publishTimeoutMs': 120_000 });
  const store = await collector();
  const feed = await store.outputs.openFeed({ name: 'siem', startAt: 'now' });
  t.after(() => feed.close());
  await node.kill();
  await until(async () => !(await store.health()).ok, 20_000, 'the store sees NATS gone');
  const controller = new AbortController();
  const pending = feed.next({ maxRecords: 10, maxBytes: 1 << 20, waitMs: 50, signal: controller.signal });
  setTimeout(() => controller.abort(), 500);
  const guard = new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 30_000).unref());
  const result = await Promise.race([pending, guard]);
  assert.notEqual(result, 'stuck', 'next() still waiting 30 s after its abort');
  assert.deepEqual(result === 'stuck' ? null : result.records, []);
});
