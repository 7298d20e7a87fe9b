// The decisions store's contract (store/decisions.ts): what both backends (files, NATS) must show. Usage, one
// test file per backend: runDecisionsContract('files', async (t) => ({ store, open, putRaw })).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Block,
  type ClearedEntry,
  DECISIONS_CURSOR,
  type DecisionsState,
} from '../../src/store/decisions.js';
import type { Store } from '../../src/store/store.js';
import { record } from './contract.js';

export interface DecisionsUnderTest {
  /** An open store whose writer is open (records can be appended). */
  store: Store;
  /** Another store on the same data: the CLI, or a second collector. */
  open(): Promise<Store>;
  /** Writes one entry as an outside hand would, bypassing every check. */
  putRaw(kind: string, key: string, value: unknown): Promise<void>;
}

export type DecisionsFactory = (t: { after(fn: () => unknown): void }) => Promise<DecisionsUnderTest>;

/** A hang guard for a watcher to see a change (the goal, 1 s, is reported, not judged). */
const WATCH_GUARD_MS = 10_000;

export function block(address: string, fields: Partial<Block> = {}): Block {
  const now = Date.now();
  return {
    address,
    rule: 'critical',
    reason: 'minCriticality 4',
    since: new Date(now).toISOString(),
    until: new Date(now + 3_600_000).toISOString(),
    criticality: 4,
    records: 1,
    sensors: ['fw1'],
    who: null,
    ...fields,
  };
}

async function until(check: () => boolean, what: string): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > WATCH_GUARD_MS)
      throw new Error(`not seen within ${WATCH_GUARD_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return Date.now() - started;
}

export function runDecisionsContract(backend: string, factory: DecisionsFactory): void {
  test(`${backend}: an entry written is read back by another store, and gone once removed`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    assert.equal((await other.decisions.read()).blocks.size, 0);
    const made = block('198.51.100.7/32');
    await store.decisions.apply([
      { kind: 'block', key: made.address, value: made },
      {
        kind: 'allow',
        key: '203.0.113.0/24',
        value: { network: '203.0.113.0/24', reason: 'partner', since: made.since, until: null, who: 'root' },
      },
    ]);
    const read = await other.decisions.read();
    assert.deepEqual(read.blocks.get('198.51.100.7/32'), made);
    assert.equal(read.allow.get('203.0.113.0/24')?.reason, 'partner');
    await other.decisions.apply([{ kind: 'block', key: made.address, value: null }]);
    const after = await store.decisions.read();
    assert.equal(after.blocks.size, 0);
    assert.equal(after.allow.size, 1);
  });

  test(`${backend}: writers of different keys at once never undo each other`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    const writes = [];
    for (let i = 0; i < 20; i++) {
      const writer = i % 2 === 0 ? store : other;
      const address = `192.0.2.${i}/32`;
      writes.push(writer.decisions.apply([{ kind: 'block', key: address, value: block(address) }]));
    }
    await Promise.all(writes);
    assert.equal((await store.decisions.read()).blocks.size, 20);
  });

  test(`${backend}: a removal made on what its writer saw is skipped when the entry was written since`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    // Watched, as a collector's store is (files: the check reads through the watchers' shared reader). A watch
    // error (NATS: a watcher reopened on a loaded box) is the watch's own business, not this test's.
    const watch = store.decisions.watch(
      () => {},
      () => {},
    );
    t.after(() => watch.stop());
    const address = '198.51.100.9/32';
    const ended = block(address, { until: new Date(Date.now() - 1000).toISOString() });
    await store.decisions.apply([{ kind: 'block', key: address, value: ended }]);
    // Another hand (the CLI's `block add`) writes the network's block again before the first removes the one
    // it saw ended; an allow entry's removal in the same batch, unchanged since, goes.
    const renewed = block(address, { rule: 'manual', who: 'root' });
    await other.decisions.apply([{ kind: 'block', key: address, value: renewed }]);
    const allow = {
      network: '203.0.113.0/24',
      reason: 'partner',
      since: ended.since,
      until: ended.until,
      who: 'root',
    };
    await store.decisions.apply([{ kind: 'allow', key: allow.network, value: allow }]);
    await store.decisions.apply([
      { kind: 'block', key: address, value: null, ifStill: ended },
      { kind: 'allow', key: allow.network, value: null, ifStill: allow },
    ]);
    const read = await other.decisions.read();
    assert.deepEqual(read.blocks.get(address), renewed);
    assert.equal(read.allow.has(allow.network), false);
    // Unchanged since it was seen: removed. Gone already: nothing to do, no error.
    await store.decisions.apply([{ kind: 'block', key: address, value: null, ifStill: renewed }]);
    assert.equal((await other.decisions.read()).blocks.has(address), false);
    await store.decisions.apply([{ kind: 'block', key: address, value: null, ifStill: renewed }]);
    assert.equal((await store.decisions.read()).blocks.has(address), false);
  });

  test(`${backend}: hundreds of conditional removals in one write: those unchanged go, those written since stay`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    const past = new Date(Date.now() - 1000).toISOString();
    const ended = Array.from({ length: 600 }, (_, i) =>
      block(`10.${i >> 8}.${i & 255}.1/32`, { until: past }),
    );
    await store.decisions.apply(ended.map((b) => ({ kind: 'block' as const, key: b.address, value: b })));
    const renewed = [3, 255, 256, 257, 599].map((i) =>
      block((ended[i] as (typeof ended)[0]).address, { rule: 'manual' }),
    );
    await other.decisions.apply(renewed.map((b) => ({ kind: 'block' as const, key: b.address, value: b })));
    await store.decisions.apply(
      ended.map((b) => ({ kind: 'block' as const, key: b.address, value: null, ifStill: b })),
    );
    const left = (await other.decisions.read()).blocks;
    assert.deepEqual(
      [...left.values()].sort((a, b) => (a.address < b.address ? -1 : 1)),
      renewed.sort((a, b) => (a.address < b.address ? -1 : 1)),
    );
  });

  test(`${backend}: a conditional write goes only over what its writer saw: none, or an entry`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    const key = '198.51.100.10/32';
    const mark = (minute: number, ended?: true): ClearedEntry => ({
      address: key,
      at: new Date(Date.UTC(2026, 10, 30, 10, minute)).toISOString(),
      ...(ended ? { ended } : {}),
    });
    const held = async () => (await other.decisions.read()).cleared.get(key);
    // None seen, none there: written.
    await store.decisions.apply([{ kind: 'cleared', key, value: mark(1, true), ifStill: null }]);
    assert.deepEqual(await held(), mark(1, true));
    // None seen, but another (a `block remove`) wrote one since: skipped.
    await other.decisions.apply([{ kind: 'cleared', key, value: mark(2) }]);
    const skipped = { kind: 'cleared' as const, key, value: mark(3, true), ifStill: null };
    assert.deepEqual(await store.decisions.apply([skipped]), [skipped], 'the skipped change is said');
    assert.deepEqual(await held(), mark(2));
    // Seen as it is: written; seen as it was before: skipped.
    assert.deepEqual(
      await store.decisions.apply([{ kind: 'cleared', key, value: mark(3, true), ifStill: mark(2) }]),
      [],
    );
    assert.deepEqual(await held(), mark(3, true));
    await store.decisions.apply([{ kind: 'cleared', key, value: mark(4), ifStill: mark(2) }]);
    assert.deepEqual(await held(), mark(3, true));
    // None seen after a removal (NATS: a key with its removal marker): written.
    await other.decisions.apply([{ kind: 'cleared', key, value: null }]);
    await store.decisions.apply([{ kind: 'cleared', key, value: mark(4), ifStill: null }]);
    assert.deepEqual(await held(), mark(4));
  });

  test(`${backend}: a watcher sees another store's change, once at start and after each change`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    let seen: DecisionsState | null = null;
    const watch = store.decisions.watch(
      (state) => {
        seen = state;
      },
      () => {},
    );
    t.after(() => watch.stop());
    await until(() => seen !== null, 'the first state');
    const address = '2001:db8:1:2::/64';
    await other.decisions.apply([{ kind: 'block', key: address, value: block(address) }]);
    const ms = await until(
      () => (seen as DecisionsState | null)?.blocks.has(address) === true,
      'the new block',
    );
    t.diagnostic(`${backend}: a change seen by the watcher after ${ms} ms`);
    await other.decisions.apply([{ kind: 'block', key: address, value: null }]);
    await until(() => (seen as DecisionsState | null)?.blocks.has(address) === false, 'the removal');
  });

  test(`${backend}: entries that are not of their kind's shape are left out`, async (t) => {
    const { store, putRaw } = await factory(t);
    await store.decisions.apply([{ kind: 'block', key: '192.0.2.1/32', value: block('192.0.2.1/32') }]);
    await putRaw('block', '192.0.2.2/32', { address: '192.0.2.2/32', until: 'tomorrow' });
    await putRaw('feed', 'fw', { name: 'fw', format: 'gopher' });
    const read = await store.decisions.read();
    assert.deepEqual([...read.blocks.keys()], ['192.0.2.1/32']);
    assert.equal(read.feeds.size, 0);
  });

  test(`${backend}: the decisions cursor reads the record log as an output does, and outputs list leaves it out`, async (t) => {
    const { store } = await factory(t);
    const log = await store.openRecordLog();
    t.after(() => log.close());
    const feed = await store.outputs.openFeed({ name: DECISIONS_CURSOR, startAt: 0 });
    const output = await store.outputs.openFeed({ name: 'siem', startAt: 0 });
    t.after(async () => {
      await feed.close();
      await output.close();
    });
    const stored = record({ src_ip: '198.51.100.9', criticality: 4 });
    await log.append([stored]);
    const signal = AbortSignal.timeout(WATCH_GUARD_MS);
    const batch = await feed.next({ maxRecords: 10, maxBytes: 1_000_000, waitMs: 50, signal });
    assert.deepEqual(
      batch.records.map((r) => r.record.src_ip),
      ['198.51.100.9'],
    );
    await batch.ack();
    const other = await output.next({ maxRecords: 10, maxBytes: 1_000_000, waitMs: 50, signal });
    await other.ack();
    const names = (await store.outputs.list()).map((p) => p.name);
    assert.deepEqual(names, ['siem']);
  });

  test(`${backend}: the engine's lease`, async (t) => {
    const { store, open } = await factory(t);
    const other = await open();
    t.after(() => other.close());
    assert.equal(await store.decisions.lease('engine', 'a', 400), true);
    assert.equal(await store.decisions.lease('engine', 'a', 400), true, 'renewed by its holder');
    // Files: one collector per data directory, the lease is always its own. NATS: one holder at a time.
    const exclusive = backend !== 'files';
    assert.equal(await other.decisions.lease('engine', 'b', 400), !exclusive);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await other.decisions.lease('engine', 'b', 60_000), true, 'taken once it ran out');
    assert.equal(await store.decisions.lease('engine', 'a', 400), !exclusive);
    assert.equal(await other.decisions.lease('engine', 'b', 0), true, 'released');
    assert.equal(await store.decisions.lease('engine', 'a', 400), true);
  });
}
