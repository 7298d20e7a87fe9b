// An output shared by two collectors on a three-node NATS cluster (stream, consumer and buckets with 3
// replicas): the node leading the output's consumer is killed -9 while both forward. Nothing acknowledged is
// lost or handed over again; what was in flight is redelivered with the same ids.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { outputConsumerName } from '../../src/store/nats/names.js';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import type { OutputFeed, Store } from '../../src/store/store.js';
import { startNatsCluster } from '../helpers/nats-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const RECORDS = 400;
const ACK_WAIT_MS = 3000;

interface Forwarded {
  /** Every id handed to this collector, in order (a redelivery appears again). */
  delivered: string[];
  /** Ids whose batch's ack() resolved. */
  acked: string[];
  /** Ids whose batch's ack() rejected (NATS did not confirm): these may come again. */
  unconfirmed: string[];
}

/** One collector's forwarder: takes batches, "delivers" them (a short wait, as a receiver's answer), acks. */
function forward(feed: OutputFeed, stop: AbortSignal): { result: Forwarded; done: Promise<void> } {
  const result: Forwarded = { delivered: [], acked: [], unconfirmed: [] };
  const done = (async () => {
    while (!stop.aborted) {
      const batch = await feed.next({ maxRecords: 20, maxBytes: 1 << 20, waitMs: 20, signal: stop });
      const ids = batch.records.map((l) => l.record.id);
      if (ids.length === 0) continue;
      result.delivered.push(...ids);
      await new Promise((resolve) => setTimeout(resolve, 10));
      try {
        await batch.ack();
        result.acked.push(...ids);
      } catch {
        result.unconfirmed.push(...ids);
      }
    }
  })();
  return { result, done };
}

test('NATS cluster: the node leading an output’s consumer killed while two collectors forward: nothing acknowledged lost or sent again', async (t) => {
  const cluster = await startNatsCluster(t, 3);
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: {
      dataDir,
      'store.backend': 'nats',
      'nats.servers': cluster.servers,
      'nats.replicas': 3,
      'nats.publishTimeoutMs': 15_000,
    },
  });
  const logger = pino({ level: 'silent' });
  const stores: Store[] = [];
  t.after(async () => {
    for (const s of stores.reverse()) await s.close();
  });
  const collector = async () => {
    const store = await openNatsStore(config, { logger, dataDir, outputAckWaitMs: ACK_WAIT_MS });
    stores.push(store);
    return store;
  };
  const writer = await collector();
  const log = await writer.openRecordLog();
  t.after(() => log.close());
  const stored: string[] = [];
  for (let i = 0; i < RECORDS; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => record({ threat: `r${i + j}` }));
    stored.push(...(await log.append(batch)).ids);
  }

  const feeds = await Promise.all(
    [0, 1].map(async () => (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 })),
  );
  t.after(() => Promise.all(feeds.map((f) => f.close())));
  const stop = new AbortController();
  t.after(() => stop.abort());
  const forwarders = feeds.map((feed) => forward(feed, stop.signal));
  const ackedIds = () => new Set(forwarders.flatMap((f) => f.result.acked));

  await until(() => ackedIds().size >= 100, 30_000, 'forwarding before the kill');
  const nc = await connect({ servers: cluster.servers });
  const leader = (
    await (await jetstreamManager(nc)).consumers.info(config.nats.stream, outputConsumerName('siem'))
  ).cluster?.leader;
  await nc.close();
  const victim = cluster.nodes.find((n) => n.name === leader);
  assert.ok(victim, `consumer leader ${leader} is one of ours`);
  const ackedBeforeKill = ackedIds().size;
  await victim.kill();

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
    `consumer leader ${leader} killed after ${ackedBeforeKill} acknowledged; delivered ${delivered.length} ` +
      `(${results.map((r) => r.delivered.length).join(' + ')}), ${duplicates.length} sent twice, ` +
      `${unconfirmed.size} with an unconfirmed ack; all acknowledged ${recoveryMs} ms after the kill`,
  );
  assert.deepEqual([...copies.keys()].sort(), [...stored].sort(), 'every stored record reached the receiver');
  // A record is sent again only when its batch's acknowledgement was not confirmed (in flight at the kill).
  assert.deepEqual(
    duplicates.filter((id) => !unconfirmed.has(id)),
    [],
    'no record whose ack was confirmed came again',
  );

  // Afterwards nothing acknowledged comes again, and the output has no lag.
  const late = await (await collector()).outputs.openFeed({ name: 'siem', startAt: 0 });
  t.after(() => late.close());
  const again = await late.next({
    maxRecords: 100,
    maxBytes: 1 << 20,
    waitMs: 20,
    signal: AbortSignal.timeout(ACK_WAIT_MS * 2),
  });
  assert.deepEqual(
    again.records.map((l) => l.record.id),
    [],
  );
  const [position] = (await stores[0]?.outputs.list()) ?? [];
  assert.equal(position?.lagRecords, 0);
});
