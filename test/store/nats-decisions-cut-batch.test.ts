// A batch of decisions cut between two puts (a NATS node lost mid-write) on the real NATS store: the engine
// decides the batch again from what was stored, and a first block must still last its rule's duration, not
// repeatFactor times it, and each block keeps its offence (the count a later block's duration is made from,
// written after the block: a cut between them is counted again from the stored block). The engine runs on a
// real nats-server through the real NATS decisions store, whose bucket is wrapped to cut one batch: of the puts in flight together, k land (in the order sent, or the
// reverse: concurrent puts may be stored in any order) and every later one fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { startDecisionEngine } from '../../src/decisions/engine.js';
import type { Block, DecisionChange, DecisionsStore, OffenceEntry } from '../../src/store/decisions.js';
import { createNatsDecisions } from '../../src/store/nats/nats-decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { until } from '../helpers/until.js';
import { record } from './contract.js';

const DAY_MS = 86_400_000;
/** Hang guard for one cut batch to be decided again (the engine retries after 1 s). */
const GUARD_MS = 30_000;

/** One batch cut: of the puts sent at once, `lands` are stored (in `order`), the rest and any later fail. */
class Cut {
  private inFlight: { send: () => Promise<unknown>; resolve(v: unknown): void; reject(e: Error): void }[] =
    [];
  constructor(
    private lands: number,
    private readonly order: 'sent' | 'reversed',
  ) {}

  put(send: () => Promise<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.inFlight.push({ send, resolve, reject });
      if (this.inFlight.length === 1) setImmediate(() => this.land());
    });
  }

  private land(): void {
    const flight = this.order === 'reversed' ? this.inFlight.reverse() : this.inFlight;
    this.inFlight = [];
    for (const put of flight) {
      if (this.lands > 0) {
        this.lands--;
        put.send().then(put.resolve, put.reject);
      } else put.reject(new Error('cut: the node was lost before this put'));
    }
  }
}

/** The bucket with its puts and purges sent through `cut()` while it returns one. */
function cuttable(kv: KV, cut: () => Cut | null): KV {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'put' && prop !== 'purge') return value.bind(target);
      return (...args: unknown[]) => {
        const send = () => Reflect.apply(value, target, args) as Promise<unknown>;
        return cut()?.put(send) ?? send();
      };
    },
  });
}

test('nats: a batch of blocks cut after k puts (sent order or reversed) is decided again to blocks of the rule’s duration, not repeatFactor times it', async (t) => {
  const { node, dataDir, config } = await natsBackend(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
    'blocklist.repeatFactor': 2,
  });
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  const log = await store.openRecordLog();
  t.after(() => log.close());

  const nc = await connect({ servers: node.url });
  t.after(() => nc.close());
  let cutting: Cut | null = null;
  let next: Cut | null = null;
  const real = createNatsDecisions({
    name: config.blocklist.bucket,
    open: async (timeout) =>
      cuttable(
        await new Kvm(jetstream(nc, { timeout })).create(config.blocklist.bucket, { history: 1 }),
        () => cutting,
      ),
    waitMs: config.nats.publishTimeoutMs,
  });
  /** The next batch that makes blocks (it has offences) is cut. */
  const decisions: DecisionsStore = {
    ...real,
    async apply(changes: readonly DecisionChange[]) {
      if (next === null || !changes.some((c) => c.kind === 'offence')) return real.apply(changes);
      cutting = next;
      next = null;
      try {
        return await real.apply(changes);
      } finally {
        cutting = null;
      }
    },
  };
  const engine = startDecisionEngine({
    store: { outputs: store.outputs, reader: store.reader, decisions },
    blocklist: config.blocklist,
    logger,
  });
  t.after(() => engine.stop());

  let n = 0;
  const cases: string[] = [];
  for (const order of ['sent', 'reversed'] as const) {
    // Two new blocks a batch: a block and an offence each (the rule's history the first time): up to 5 puts.
    for (let k = 0; k <= 5; k++) {
      const addresses = [`198.51.100.${++n}`, `203.0.113.${n}`];
      next = new Cut(k, order);
      await log.append(addresses.map((src_ip) => record({ src_ip, criticality: 4 })));
      let blocks: Block[] = [];
      let offences: (OffenceEntry | undefined)[] = [];
      // Blocks and their offences: a block stored without its offence is counted again when the batch is.
      await until(
        async () => {
          const state = await real.read();
          blocks = addresses.map((a) => state.blocks.get(`${a}/32`)).filter((b) => b !== undefined);
          offences = addresses.map((a) => state.offences.get(`${a}/32`));
          return (
            blocks.length === addresses.length && next === null && offences.every((o) => o !== undefined)
          );
        },
        GUARD_MS,
        `both addresses blocked, each block counted (batch cut after ${k} puts, ${order})`,
      );
      for (const offence of offences)
        assert.equal(offence?.blocks, 1, `${offence?.address}: one block so far`);
      for (const block of blocks) {
        const lasts = (Date.parse(block.until) - Date.parse(block.since)) / DAY_MS;
        assert.equal(
          lasts,
          1,
          `${block.address}: a first block lasts 24 h, not ${lasts * 24} h (cut after ${k} puts, ${order})`,
        );
      }
      // Each new block is counted (and logged) once, also when the write that made it was cut.
      cases.push(`${order}/${k}`);
      await until(
        () => engine.counts().blocksMade.critical === 2 * cases.length,
        GUARD_MS,
        `blocks counted once each (cut after ${k} puts, ${order})`,
      ).catch(() => {
        assert.fail(
          `${engine.counts().blocksMade.critical} blocks counted, not ${2 * cases.length} (cut after ${k} puts, ${order})`,
        );
      });
    }
  }
  t.diagnostic(`batches cut and decided again: ${cases.join(' ')}`);
});
