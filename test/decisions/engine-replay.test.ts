// Records read again make no block their first reading did not: a restart (or a NATS collector taking over the
// engine) reads the rules' windows again from the stored records, and a rule whose block is shorter than its
// window meets those records again after the block has ended. The engine's clock is moved on by the test (the
// records carry the same clock's times), so a block of 20 s ends without waiting for it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DecisionChange, DecisionsStore } from '../../src/store/decisions.js';
import { blockChange, engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const GUARD_MS = 30_000;
const SHORT = { 'blocklist.rules': { short: { minCriticality: 4, duration: '20s', within: '1h' } } };

/** A clock the test moves on, and records received by it. */
function clock() {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms: number) {
      offset += ms;
    },
    record(src_ip: string, fields: Parameters<typeof record>[0] = {}) {
      return record({
        src_ip,
        criticality: 4,
        received_at: new Date(Date.now() + offset).toISOString(),
        ...fields,
      });
    },
  };
}

/**
 * An engine's store (engineStore), the test's clock, and the steps every test here takes: a record about an
 * address until the engine blocked it, the clock moved past a block's end until the clean-up removed it, and a
 * restart (the engine stopped, another started: it reads the rules' windows again) until it reads new records.
 */
async function replaying(
  t: { after(fn: () => unknown): void },
  overrides: Record<string, unknown>,
  decisions?: (store: DecisionsStore) => DecisionsStore,
) {
  const s = await engineStore(t, overrides);
  const c = clock();
  const start = () =>
    s.startEngine({ now: c.now, ...(decisions ? { decisions: decisions(s.store.decisions) } : {}) });
  const reads = () =>
    s.lines.filter((l) => l.msg === "the rules' windows read again from the stored records").length;
  const blockOf = async (address: string, what = `${address} blocked`) => {
    const times = s.blocked().filter((a) => a === `${address}/32`).length;
    await s.log.append([c.record(address)]);
    await until(() => s.blocked().filter((a) => a === `${address}/32`).length > times, GUARD_MS, what);
  };
  const stored = () => s.store.decisions.read();
  return {
    ...s,
    c,
    start,
    blockOf,
    stored,
    /** Moves the clock on by `ms`, and a record about `next` makes a batch, then a clean-up removes `unit`. */
    async removedByCleanUp(unit: string, ms: number, next: string) {
      c.advance(ms);
      await blockOf(next);
      await until(
        async () => !(await stored()).blocks.has(unit),
        GUARD_MS,
        `${unit} removed by the clean-up`,
      );
    },
    async restart(engine: { stop(): Promise<void> }, next: string) {
      await engine.stop();
      const before = reads();
      const started = start();
      await until(() => reads() > before, GUARD_MS, 'the windows read again');
      await blockOf(next, 'a record after the restart blocked');
      return started;
    },
  };
}

test('a restart after a block shorter than its window has ended does not make it again, nor count it twice', async (t) => {
  const r = await replaying(t, SHORT);
  const unit = '198.51.100.77/32';
  const first = r.start();
  await r.blockOf('198.51.100.77');
  const made = (await r.stored()).blocks.get(unit);
  assert.ok(made);
  // 30 s on: the block ended 10 s ago, its record is still in the rule's window of an hour.
  r.c.advance(30_000);
  await r.restart(first, '203.0.113.1');
  const state = await r.stored();
  assert.equal(state.blocks.get(unit)?.until, made.until, 'the ended block is not made again');
  assert.deepEqual(r.blocked(), [unit, '203.0.113.1/32'], 'logged once');
  assert.equal(state.offences.get(unit)?.blocks, 1, 'one offence');
});

test('once the clean-up has removed the ended block, its end is kept in the offence: a restart still does not make it again; a new record is a repeat offence', async (t) => {
  const r = await replaying(t, SHORT);
  const unit = '198.51.100.78/32';
  const first = r.start();
  await r.blockOf('198.51.100.78');
  const made = (await r.stored()).blocks.get(unit);
  assert.ok(made);
  // Past the clean-up's minute: the next batch is followed by the clean-up, which removes the ended block.
  await r.removedByCleanUp(unit, 90_000, '203.0.113.2');
  assert.deepEqual((await r.stored()).offences.get(unit), {
    address: unit,
    blocks: 1,
    last: made.since,
    until: made.until,
  });
  await r.restart(first, '203.0.113.3');
  assert.equal((await r.stored()).blocks.has(unit), false, 'the ended block is not made again');
  assert.deepEqual(r.blocked(), [unit, '203.0.113.2/32', '203.0.113.3/32']);

  // The address again, after its block: a repeat offence, twice as long.
  const at = r.c.now();
  await r.blockOf('198.51.100.78', 'blocked again');
  const state = await r.stored();
  const again = state.blocks.get(unit);
  assert.ok(again);
  assert.equal(Date.parse(again.until) - Date.parse(again.since), 40_000, 'repeatFactor 2');
  assert.ok(Date.parse(again.since) >= at);
  assert.equal(state.offences.get(unit)?.blocks, 2);
});

test('a block extended by another rule keeps its rule and reason unless that rule makes it end later', async (t) => {
  const r = await replaying(t, {
    'blocklist.rules': {
      critical: { minCriticality: 4, duration: '24h' },
      spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
      sprawling: { minCriticality: 1, minSensors: 3, within: '1h', duration: '48h' },
    },
  });
  const unit = '198.51.100.79/32';
  r.start();
  await r.blockOf('198.51.100.79');
  // Two sensors at criticality 2: `spreading` is met, its 6 h end is before the 24 h the block has.
  await r.log.append([r.c.record('198.51.100.79', { sensor: 'fw2', criticality: 2 })]);
  await r.blockOf('203.0.113.4', 'the next record read');
  let block = (await r.stored()).blocks.get(unit);
  assert.equal(block?.rule, 'critical');
  assert.match(block?.reason ?? '', /^rule critical:/);
  assert.deepEqual(block?.sensors, ['fw1', 'fw2'], 'its sensors still grow');
  // A third sensor: `sprawling` makes it end 48 h on, later than critical's end: it names the block now.
  await r.log.append([r.c.record('198.51.100.79', { sensor: 'fw3', criticality: 1 })]);
  await r.blockOf('203.0.113.5', 'the next record read');
  block = (await r.stored()).blocks.get(unit);
  assert.equal(block?.rule, 'sprawling');
  assert.match(block?.reason ?? '', /^rule sprawling:/);
  assert.ok(Date.parse(block?.until ?? '') > r.c.now() + 47 * 3_600_000);
});

test('the end kept in the offence is written before the ended block goes: a write cut after the blocks (NATS stores them first) loses neither', async (t) => {
  let cuts = 0;
  // A store that writes a batch as NATS does, its blocks before its offences, and loses the node between the two
  // in each write that removes a block.
  const natsLike = (decisions: DecisionsStore): DecisionsStore => ({
    ...decisions,
    read: () => decisions.read(),
    watch: (deliver, failed) => decisions.watch(deliver, failed),
    lease: (name, holder, ttl) => decisions.lease(name, holder, ttl),
    async apply(changes: readonly DecisionChange[]) {
      if (changes.some((ch) => ch.kind === 'block' && ch.value === null)) {
        cuts++;
        await decisions.apply(changes.filter((ch) => ch.kind !== 'offence'));
        throw new Error('the node was lost between the blocks and the offences');
      }
      return decisions.apply(changes);
    },
  });
  const r = await replaying(t, SHORT, natsLike);
  const unit = '198.51.100.90/32';
  const first = r.start();
  await r.blockOf('198.51.100.90');
  const made = (await r.stored()).blocks.get(unit);
  await r.removedByCleanUp(unit, 90_000, '203.0.113.20');
  assert.ok(cuts > 0);
  assert.equal((await r.stored()).offences.get(unit)?.until, made?.until, 'its end kept');
  await r.restart(first, '203.0.113.21');
  assert.equal((await r.stored()).blocks.has(unit), false, 'the ended block is not made again');
  assert.deepEqual(r.blocked(), [unit, '203.0.113.20/32', '203.0.113.21/32']);
});

test('a record received during a block by hand makes nothing, nor after that block ended and a restart read it again', async (t) => {
  const r = await replaying(t, {
    'blocklist.rules': { r: { minCriticality: 4, duration: '10m', within: '1h' } },
  });
  const unit = '198.51.100.91/32';
  const first = r.start();
  // A rule's block first (its offence then names an end), ended and removed by the clean-up.
  await r.blockOf('198.51.100.91');
  await r.removedByCleanUp(unit, 11 * 60_000, '203.0.113.30');
  // Then a block by hand for 2 minutes, and a record about the address during it.
  await r.store.decisions.apply([blockChange(unit, r.c.now(), r.c.now() + 120_000)]);
  await until(async () => (await r.stored()).blocks.get(unit)?.rule === 'manual', GUARD_MS, 'by hand');
  await new Promise((resolve) => setTimeout(resolve, 1200));
  r.c.advance(10_000);
  await r.log.append([r.c.record('198.51.100.91')]);
  await r.blockOf('203.0.113.31', 'the next record read');
  const manual = (await r.stored()).blocks.get(unit);
  assert.equal(manual?.rule, 'manual', 'still the block by hand');
  // The block by hand ends and the clean-up removes it: its end is kept as a removal's.
  await r.removedByCleanUp(unit, 3 * 60_000, '203.0.113.32');
  assert.equal((await r.stored()).cleared.get(unit)?.at, manual?.until);
  await r.restart(first, '203.0.113.33');
  assert.equal((await r.stored()).blocks.has(unit), false, 'nothing made of the record');
  // A record after the block by hand counts as any other.
  await r.blockOf('198.51.100.91', 'a later record blocks it');
  assert.equal((await r.stored()).blocks.get(unit)?.rule, 'r');
});

test('records received during a block by hand do not count once it has ended, before the clean-up has made its end a removal', async (t) => {
  // 'pair' needs two records; 'one' blocks the test's markers (their threat's name) at their first.
  const r = await replaying(t, {
    'blocklist.rules': {
      pair: { minCriticality: 4, minRecords: 2, duration: '10m', within: '1h' },
      one: { threat: 'marker', duration: '10m', within: '1h' },
    },
  });
  const unit = '198.51.100.92/32';
  const marked = async (marker: string, ...records: ReturnType<typeof r.c.record>[]) => {
    await r.log.append([...records, r.c.record(marker, { threat: 'marker' })]);
    await until(() => r.blocked().includes(`${marker}/32`), GUARD_MS, `${marker} read`);
  };
  r.start();
  await marked('203.0.113.40');
  // 20 s by hand, all of it within the engine's first minute: no clean-up runs in this test.
  await r.store.decisions.apply([blockChange(unit, r.c.now(), r.c.now() + 20_000)]);
  await until(async () => (await r.stored()).blocks.get(unit)?.rule === 'manual', GUARD_MS, 'by hand');
  // A record during the block by hand, then one after its end.
  r.c.advance(10_000);
  await marked('203.0.113.41', r.c.record('198.51.100.92'));
  r.c.advance(20_000);
  await marked('203.0.113.42', r.c.record('198.51.100.92'));
  assert.equal((await r.stored()).blocks.get(unit)?.rule, 'manual', 'one record since its end: nothing made');
  // A second record after its end does make it.
  await marked('203.0.113.43', r.c.record('198.51.100.92'));
  await until(async () => (await r.stored()).blocks.get(unit)?.rule === 'pair', GUARD_MS, 'blocked by pair');
});

test('a block by hand written while the clean-up writes an ended block’s end is not removed with the ended one', async (t) => {
  const unit = '198.51.100.93/32';
  let landed = false;
  const r = await replaying(t, SHORT, (decisions) => ({
    ...decisions,
    async apply(changes: readonly DecisionChange[]) {
      const ends = changes.some(
        (c) => c.kind === 'offence' && c.key === unit && c.value?.until !== undefined,
      );
      if (ends && !landed) {
        landed = true;
        // `threatcol block add 198.51.100.93 --for 1h` lands while the clean-up writes the end.
        await decisions.apply([blockChange(unit, r.c.now(), r.c.now() + 3_600_000)]);
      }
      return decisions.apply(changes);
    },
  }));
  r.start();
  await r.blockOf('198.51.100.93');
  // The block (20 s) has ended; the next batch is followed by a clean-up.
  r.c.advance(90_000);
  await r.blockOf('203.0.113.50');
  await until(() => landed, GUARD_MS, 'the clean-up wrote the end');
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal((await r.stored()).blocks.get(unit)?.rule, 'manual', 'the block by hand is still there');
});
