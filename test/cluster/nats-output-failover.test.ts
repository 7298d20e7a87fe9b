// An output shared by two collectors on a three-node NATS cluster (stream, consumer and buckets with 3
// replicas): the node leading the output's consumer is killed -9 while both forward. Nothing is skipped; what
// comes again comes with the same ids and was handed out before the kill: a batch in flight, or one whose ack
// the dying leader confirmed before its followers had it (nats-server 2.9 answers an ack before replicating it),
// which the second test brings about on purpose by stopping the other two nodes before the ack. On a busy box
// the new leader may be replaced in turn (its heartbeats late): what it confirmed may come again too, as may a
// batch held past ack_wait; the test tells those from a feed handing out again what was confirmed.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { outputConsumerName } from '../../src/store/nats/names.js';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import type { OutputFeed, Store } from '../../src/store/store.js';
import { startNatsCluster } from '../helpers/nats-server.js';
import { stopProcess } from '../helpers/stop-process.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const RECORDS = 400;
/**
 * The consumers' ack_wait: the dead leader's batches come again after it. A collector marks a batch it holds in
 * progress three times within it, so only a process stalled for this long (200x a batch's hand-out to ack on a
 * quiet box) lets a held batch go to the other collector.
 */
const ACK_WAIT_MS = 6000;

interface Forwarded {
  /** Every id handed to this collector, in order (a redelivery appears again). */
  delivered: string[];
  /** Ids whose batch's ack() resolved. */
  acked: string[];
  /** Ids whose batch's ack() rejected (NATS did not confirm): these may come again. */
  unconfirmed: string[];
  /** Per hand-out (same order as `delivered`): when the batch came and when its ack was confirmed (or null). */
  times: { at: number; ackedAt: number | null }[];
}

/** One collector's forwarder: takes batches, "delivers" them (a short wait, as a receiver's answer), acks. */
function forward(feed: OutputFeed, stop: AbortSignal): { result: Forwarded; done: Promise<void> } {
  const result: Forwarded = { delivered: [], acked: [], unconfirmed: [], times: [] };
  const done = (async () => {
    while (!stop.aborted) {
      const batch = await feed.next({ maxRecords: 20, maxBytes: 1 << 20, waitMs: 20, signal: stop });
      const ids = batch.records.map((l) => l.record.id);
      if (ids.length === 0) continue;
      result.delivered.push(...ids);
      const times = ids.map(() => ({ at: Date.now(), ackedAt: null as number | null }));
      result.times.push(...times);
      await new Promise((resolve) => setTimeout(resolve, 10));
      try {
        await batch.ack();
        result.acked.push(...ids);
        for (const time of times) time.ackedAt = Date.now();
      } catch {
        result.unconfirmed.push(...ids);
      }
    }
  })();
  return { result, done };
}

/** A three-node cluster with `records` stored (replicas 3); collectors on every node, or on the ones given. */
async function setUp(t: TestContext, records: number) {
  const cluster = await startNatsCluster(t, 3);
  const dataDir = makeTempDir(t);
  const configFor = (servers: string[]) =>
    loadConfig({
      env: {},
      defaultConfigPath: '/nonexistent/threatcol.json',
      overrides: {
        dataDir,
        'store.backend': 'nats',
        'nats.servers': servers,
        'nats.replicas': 3,
        'nats.publishTimeoutMs': 15_000,
      },
    }).config;
  const config = configFor(cluster.servers);
  const logger = pino({ level: 'silent' });
  const stores: Store[] = [];
  t.after(async () => {
    for (const s of stores.reverse()) await s.close();
  });
  const collector = async (servers = cluster.servers) => {
    const store = await openNatsStore(configFor(servers), { logger, dataDir, outputAckWaitMs: ACK_WAIT_MS });
    stores.push(store);
    return store;
  };
  const writer = await collector();
  const log = await writer.openRecordLog();
  t.after(() => log.close());
  const stored: string[] = [];
  for (let i = 0; i < records; i += 50) {
    const batch = Array.from({ length: Math.min(50, records - i) }, (_, j) =>
      record({ threat: `r${i + j}` }),
    );
    stored.push(...(await log.append(batch)).ids);
  }
  /** The node leading the output's consumer, e.g. "n2", or undefined while none does. */
  const consumerLeader = async () => {
    const nc = await connect({ servers: cluster.servers });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      return (await jsm.consumers.info(config.nats.stream, outputConsumerName('siem'))).cluster?.leader;
    } catch {
      return undefined; // none while the others elect one
    } finally {
      await nc.close();
    }
  };
  return { cluster, stores, collector, stored, consumerLeader, stream: config.nats.stream };
}

test('NATS cluster: the node leading an output’s consumer killed while two collectors forward: nothing skipped, only what was out at the kill comes again', async (t) => {
  const { cluster, stores, collector, stored, consumerLeader, stream } = await setUp(t, RECORDS);

  const feeds = await Promise.all(
    [0, 1].map(async () => (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 })),
  );
  t.after(() => Promise.all(feeds.map((f) => f.close())));
  const stop = new AbortController();
  t.after(() => stop.abort());
  const forwarders = feeds.map((feed) => forward(feed, stop.signal));
  const ackedIds = () => new Set(forwarders.flatMap((f) => f.result.acked));

  await until(() => ackedIds().size >= 100, 30_000, 'forwarding before the kill');
  const leader = await consumerLeader();
  const victim = cluster.nodes.find((n) => n.name === leader);
  assert.ok(victim, `consumer leader ${leader} is one of ours`);
  // Every election of the consumer's leader from here on, as the servers announce it (a busy box may hold more
  // than one after the kill: a new leader whose heartbeats come late is replaced in turn).
  const elections: number[] = [];
  const watcher = await connect({ servers: cluster.nodes.filter((n) => n !== victim).map((n) => n.url) });
  t.after(() => watcher.close());
  watcher.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.${stream}.${outputConsumerName('siem')}`, {
    callback: () => {
      elections.push(Date.now());
    },
  });
  await watcher.flush();
  const killedAt = Date.now();
  await victim.kill();
  const confirmedByVictim = ackedIds();
  // Batches the dead leader sent may still be on their way: counted once another node leads the consumer.
  await until(
    async () => ![undefined, leader].includes(await consumerLeader()),
    60_000,
    'a new consumer leader',
    100,
  );
  const deliveredBeforeKill = new Set(forwarders.flatMap((f) => f.result.delivered));

  const recoveryMs = await until(
    () => ackedIds().size === RECORDS,
    90_000,
    'every record acknowledged after the kill',
  );
  stop.abort();
  await Promise.all(forwarders.map((f) => f.done));
  const results = forwarders.map((f) => f.result);
  const delivered = results.flatMap((r) => r.delivered);
  const unconfirmed = new Set(results.flatMap((r) => r.unconfirmed));
  const copies = new Map<string, number>();
  for (const id of delivered) copies.set(id, (copies.get(id) ?? 0) + 1);
  const duplicates = [...copies].filter(([, n]) => n > 1).map(([id]) => id);
  t.diagnostic(
    `consumer leader ${leader} killed after ${confirmedByVictim.size} acknowledged; delivered ${delivered.length} ` +
      `(${results.map((r) => r.delivered.length).join(' + ')}), ${duplicates.length} sent twice ` +
      `(${duplicates.filter((id) => confirmedByVictim.has(id)).length} of them confirmed by the dead leader), ` +
      `${unconfirmed.size} with an unconfirmed ack; all acknowledged ${recoveryMs} ms after the kill`,
  );
  assert.deepEqual([...copies.keys()].sort(), [...stored].sort(), 'every stored record reached the receiver');
  // What comes again was handed out before the kill, or its ack was not confirmed: a batch the new leader
  // handed out and confirmed never comes again.
  // At least once, not more: a record handed out after the kill and confirmed may come again only
  // - when the server handed it out again before that confirmation (its ack_wait ran out first: a slow box), or
  // - when the consumer's leader was elected again after it was handed out: nats-server 2.9 confirms an ack
  //   before the other nodes have it, so a leader replaced in turn loses acks it confirmed (its successor
  //   hands those records out again). Anything else would be a feed handing out what was confirmed.
  const handOuts = forwarders.flatMap((f) =>
    f.result.delivered.map((id, i) => ({
      id,
      ...(f.result.times[i] as { at: number; ackedAt: number | null }),
    })),
  );
  /** A confirmed copy of the record whose leader was replaced after it handed it out (none: the record's acks held). */
  // The first election after the kill makes the dead leader's successor; only those after it replace a leader
  // that confirmed acks after the kill.
  const reelections = elections.slice(1);
  const electedSince = (id: string, after: number) =>
    handOuts.some(
      (c) => c.id === id && c.ackedAt !== null && c.at < after && reelections.some((e) => e > c.at),
    );
  const unexplained = duplicates.filter((id) => {
    if (deliveredBeforeKill.has(id) || unconfirmed.has(id)) return false;
    const all = handOuts.filter((c) => c.id === id);
    return all.some(
      (other) =>
        all.some((confirmed) => confirmed.ackedAt !== null && other.at > confirmed.ackedAt) &&
        !electedSince(id, other.at),
    );
  });
  const explained = duplicates.filter((id) => !deliveredBeforeKill.has(id) && !unconfirmed.has(id));
  t.diagnostic(
    `${elections.length} consumer leader election(s) after the kill (at +${elections.map((e) => e - killedAt).join(', +')} ms); ` +
      `${explained.length} handed out and confirmed after the kill came again, by an expired ack_wait or a later election`,
  );
  assert.deepEqual(
    unexplained.map((id) => ({
      id,
      copies: handOuts
        .filter((c) => c.id === id)
        .map((c) => `at +${c.at - killedAt} acked ${c.ackedAt === null ? '-' : `+${c.ackedAt - killedAt}`}`),
    })),
    [],
    'no record handed out and confirmed after the kill came again after its confirmation without a leader election',
  );

  // Afterwards: what the dead leader handed out or confirmed without replicating it may come once more (after
  // ack_wait), and only that; acknowledged again, nothing comes and the output has no lag.
  const late = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => late.close());
  const again: string[] = [];
  for (;;) {
    const batch = await late.next({
      maxRecords: 100,
      maxBytes: 1 << 20,
      waitMs: 20,
      signal: AbortSignal.timeout(ACK_WAIT_MS * 2),
    });
    if (batch.records.length === 0) break;
    again.push(...batch.records.map((l) => l.record.id));
    await batch.ack();
  }
  t.diagnostic(
    `${again.length} records came again to a feed opened afterwards ` +
      `(${again.filter((id) => confirmedByVictim.has(id)).length} of them confirmed by the dead leader)`,
  );
  assert.deepEqual(
    again.filter((id) => !deliveredBeforeKill.has(id) && !electedSince(id, Number.POSITIVE_INFINITY)),
    [],
    'only records handed out before the kill (or confirmed by a leader replaced in turn) come again',
  );
  const [position] = (await stores[0]?.outputs.list()) ?? [];
  assert.equal(position?.lagRecords, 0);
});

test('NATS cluster: an ack the consumer leader confirmed before the other nodes had it, then the leader killed: the batch comes again, never skipped', async (t) => {
  const { cluster, collector, stored, consumerLeader } = await setUp(t, 20);
  // The consumer made, then its leader found, and a collector connected to that node only: its acks reach the
  // leader while the other two are stopped.
  const first = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  await first.close();
  const leader = await consumerLeader();
  const victim = cluster.nodes.find((n) => n.name === leader);
  assert.ok(victim, `consumer leader ${leader} is one of ours`);
  const others = cluster.nodes.filter((n) => n !== victim);
  const feed = await (await collector([victim.url])).outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => feed.close());
  const batch = await feed.next({
    maxRecords: 20,
    maxBytes: 1 << 20,
    waitMs: 20,
    signal: AbortSignal.timeout(30_000),
  });
  assert.deepEqual(
    batch.records.map((l) => l.record.id),
    stored,
  );

  let resumed = false;
  t.after(() => {
    if (!resumed) for (const n of others) process.kill(n.pid as number, 'SIGCONT');
  });
  for (const n of others) await stopProcess(n.pid as number);
  // No quorum now: a server that confirms only what a quorum has answers nothing (the ack() rejects).
  const confirmed = await batch.ack().then(
    () => true,
    () => false,
  );
  await victim.kill();
  for (const n of others) process.kill(n.pid as number, 'SIGCONT');
  resumed = true;

  const late = await (await collector(others.map((n) => n.url))).outputs.openFeed({
    name: 'siem',
    startAt: 0,
  });
  t.after(() => late.close());
  const again = new Set<string>();
  await until(
    async () => {
      const next = await late.next({
        maxRecords: 20,
        maxBytes: 1 << 20,
        waitMs: 20,
        signal: AbortSignal.timeout(5000),
      });
      for (const l of next.records) again.add(l.record.id);
      await next.ack().catch(() => {}); // confirmed or not, it comes again until one is
      return again.size === stored.length;
    },
    60_000,
    'the batch handed out again',
  );
  t.diagnostic(
    `the dying leader ${confirmed ? 'confirmed' : 'did not confirm'} the ack; the batch came again`,
  );
  assert.deepEqual([...again].sort(), [...stored].sort());
});
