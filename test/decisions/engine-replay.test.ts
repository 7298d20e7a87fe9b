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

test('a restart after a block shorter than its window has ended does not make it again, nor count it twice', async (t) => {
  const { store, log, blocked, lines, startEngine } = await engineStore(t, SHORT);
  const c = clock();
  const unit = '198.51.100.77/32';
  const first = startEngine({ now: c.now });
  await log.append([c.record('198.51.100.77')]);
  await until(() => blocked().includes(unit), GUARD_MS, 'the block made');
  const made = (await store.decisions.read()).blocks.get(unit);
  assert.ok(made);
  await first.stop();

  // 30 s on: the block ended 10 s ago, its record is still in the rule's window of an hour.
  c.advance(30_000);
  const rebuilt = () =>
    lines.filter((l) => l.msg === "the rules' windows read again from the stored records");
  const second = startEngine({ now: c.now });
  await until(() => rebuilt().length === 2, GUARD_MS, 'the windows read again');
  await log.append([c.record('203.0.113.1')]);
  await until(() => blocked().includes('203.0.113.1/32'), GUARD_MS, 'a record after the restart blocked');
  const state = await store.decisions.read();
  assert.equal(state.blocks.get(unit)?.until, made.until, 'the ended block is not made again');
  assert.deepEqual(blocked(), [unit, '203.0.113.1/32'], 'logged once');
  assert.equal(state.offences.get(unit)?.blocks, 1, 'one offence');
  await second.stop();
});

test('once the clean-up has removed the ended block, its end is kept in the offence: a restart still does not make it again; a new record is a repeat offence', async (t) => {
  const { store, log, blocked, lines, startEngine } = await engineStore(t, SHORT);
  const c = clock();
  const unit = '198.51.100.78/32';
  const first = startEngine({ now: c.now });
  await log.append([c.record('198.51.100.78')]);
  await until(() => blocked().includes(unit), GUARD_MS, 'the block made');
  const made = (await store.decisions.read()).blocks.get(unit);
  assert.ok(made);
  // Past the clean-up's minute: the next batch is followed by the clean-up, which removes the ended block.
  c.advance(90_000);
  await log.append([c.record('203.0.113.2')]);
  await until(
    async () => !(await store.decisions.read()).blocks.has(unit),
    GUARD_MS,
    'the ended block removed by the clean-up',
  );
  assert.deepEqual((await store.decisions.read()).offences.get(unit), {
    address: unit,
    blocks: 1,
    last: made.since,
    until: made.until,
  });
  await first.stop();

  const rebuilt = () =>
    lines.filter((l) => l.msg === "the rules' windows read again from the stored records");
  const second = startEngine({ now: c.now });
  await until(() => rebuilt().length === 2, GUARD_MS, 'the windows read again');
  await log.append([c.record('203.0.113.3')]);
  await until(() => blocked().includes('203.0.113.3/32'), GUARD_MS, 'a record after the restart blocked');
  assert.equal((await store.decisions.read()).blocks.has(unit), false, 'the ended block is not made again');
  assert.deepEqual(blocked(), [unit, '203.0.113.2/32', '203.0.113.3/32']);

  // The address again, after its block: a repeat offence, twice as long.
  const at = c.now();
  await log.append([c.record('198.51.100.78')]);
  await until(() => blocked().filter((a) => a === unit).length === 2, GUARD_MS, 'blocked again');
  const state = await store.decisions.read();
  const again = state.blocks.get(unit);
  assert.ok(again);
  assert.equal(Date.parse(again.until) - Date.parse(again.since), 40_000, 'repeatFactor 2');
  assert.ok(Date.parse(again.since) >= at);
  assert.equal(state.offences.get(unit)?.blocks, 2);
  await second.stop();
});

test('a block extended by another rule keeps its rule and reason unless that rule makes it end later', async (t) => {
  const { store, log, blocked, startEngine } = await engineStore(t, {
    'blocklist.rules': {
      critical: { minCriticality: 4, duration: '24h' },
      spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
      sprawling: { minCriticality: 1, minSensors: 3, within: '1h', duration: '48h' },
    },
  });
  const c = clock();
  const unit = '198.51.100.79/32';
  startEngine({ now: c.now });
  await log.append([c.record('198.51.100.79', { sensor: 'fw1' })]);
  await until(() => blocked().includes(unit), GUARD_MS, 'the block made');
  // Two sensors at criticality 2: `spreading` is met, its 6 h end is before the 24 h the block has.
  await log.append([c.record('198.51.100.79', { sensor: 'fw2', criticality: 2 })]);
  await log.append([c.record('203.0.113.4')]);
  await until(() => blocked().includes('203.0.113.4/32'), GUARD_MS, 'the next record read');
  let block = (await store.decisions.read()).blocks.get(unit);
  assert.equal(block?.rule, 'critical');
  assert.match(block?.reason ?? '', /^rule critical:/);
  assert.deepEqual(block?.sensors, ['fw1', 'fw2'], 'its sensors still grow');
  // A third sensor: `sprawling` makes it end 48 h on, later than critical's end: it names the block now.
  await log.append([c.record('198.51.100.79', { sensor: 'fw3', criticality: 1 })]);
  await log.append([c.record('203.0.113.5')]);
  await until(() => blocked().includes('203.0.113.5/32'), GUARD_MS, 'the next record read');
  block = (await store.decisions.read()).blocks.get(unit);
  assert.equal(block?.rule, 'sprawling');
  assert.match(block?.reason ?? '', /^rule sprawling:/);
  assert.ok(Date.parse(block?.until ?? '') > c.now() + 47 * 3_600_000);
});

test('the end kept in the offence is written before the ended block goes: a write cut after the blocks (NATS stores them first) loses neither', async (t) => {
  const { store, log, blocked, lines, startEngine } = await engineStore(t, SHORT);
  const c = clock();
  const unit = '198.51.100.90/32';
  let cuts = 0;
  // A store that writes a batch as NATS does, its blocks before its offences, and loses the node between the two
  // in each write that removes a block.
  const natsLike: DecisionsStore = {
    ...store.decisions,
    read: () => store.decisions.read(),
    watch: (deliver, failed) => store.decisions.watch(deliver, failed),
    lease: (name, holder, ttl) => store.decisions.lease(name, holder, ttl),
    async apply(changes: readonly DecisionChange[]) {
      if (changes.some((ch) => ch.kind === 'block' && ch.value === null)) {
        cuts++;
        await store.decisions.apply(changes.filter((ch) => ch.kind !== 'offence'));
        throw new Error('the node was lost between the blocks and the offences');
      }
      await store.decisions.apply(changes);
    },
  };
  const first = startEngine({ now: c.now, decisions: natsLike });
  await log.append([c.record('198.51.100.90')]);
  await until(() => blocked().includes(unit), GUARD_MS, 'the block made');
  const made = (await store.decisions.read()).blocks.get(unit);
  c.advance(90_000);
  await log.append([c.record('203.0.113.20')]);
  await until(
    async () => !(await store.decisions.read()).blocks.has(unit),
    GUARD_MS,
    'the ended block removed',
  );
  assert.ok(cuts > 0);
  assert.equal((await store.decisions.read()).offences.get(unit)?.until, made?.until, 'its end kept');
  await first.stop();

  const rebuilt = () =>
    lines.filter((l) => l.msg === "the rules' windows read again from the stored records");
  startEngine({ now: c.now, decisions: natsLike });
  await until(() => rebuilt().length === 2, GUARD_MS, 'the windows read again');
  await log.append([c.record('203.0.113.21')]);
  await until(() => blocked().includes('203.0.113.21/32'), GUARD_MS, 'a record after the restart blocked');
  assert.equal((await store.decisions.read()).blocks.has(unit), false, 'the ended block is not made again');
  assert.deepEqual(blocked(), [unit, '203.0.113.20/32', '203.0.113.21/32']);
});

test('a record received during a block by hand makes nothing, nor after that block ended and a restart read it again', async (t) => {
  const { store, log, blocked, lines, startEngine } = await engineStore(t, {
    'blocklist.rules': { r: { minCriticality: 4, duration: '10m', within: '1h' } },
  });
  const c = clock();
  const unit = '198.51.100.91/32';
  const first = startEngine({ now: c.now });
  // A rule's block first (its offence then names an end), ended and removed by the clean-up.
  await log.append([c.record('198.51.100.91')]);
  await until(() => blocked().includes(unit), GUARD_MS, 'the rule block made');
  c.advance(11 * 60_000);
  await log.append([c.record('203.0.113.30')]);
  await until(
    async () => !(await store.decisions.read()).blocks.has(unit),
    GUARD_MS,
    'the rule block removed',
  );
  // Then a block by hand for 2 minutes, and a record about the address during it.
  await store.decisions.apply([blockChange(unit, c.now(), c.now() + 120_000)]);
  await until(
    async () => (await store.decisions.read()).blocks.get(unit)?.rule === 'manual',
    GUARD_MS,
    'by hand',
  );
  await new Promise((resolve) => setTimeout(resolve, 1200));
  c.advance(10_000);
  await log.append([c.record('198.51.100.91')]);
  await log.append([c.record('203.0.113.31')]);
  await until(() => blocked().includes('203.0.113.31/32'), GUARD_MS, 'the next record read');
  assert.equal((await store.decisions.read()).blocks.get(unit)?.rule, 'manual', 'still the block by hand');
  const manual = (await store.decisions.read()).blocks.get(unit);
  // The block by hand ends and the clean-up removes it: its end is kept as a removal's.
  c.advance(3 * 60_000);
  await log.append([c.record('203.0.113.32')]);
  await until(
    async () => !(await store.decisions.read()).blocks.has(unit),
    GUARD_MS,
    'the block by hand removed',
  );
  assert.equal((await store.decisions.read()).cleared.get(unit)?.at, manual?.until);
  await first.stop();

  const rebuilt = () =>
    lines.filter((l) => l.msg === "the rules' windows read again from the stored records");
  startEngine({ now: c.now });
  await until(() => rebuilt().length === 2, GUARD_MS, 'the windows read again');
  await log.append([c.record('203.0.113.33')]);
  await until(() => blocked().includes('203.0.113.33/32'), GUARD_MS, 'a record after the restart blocked');
  assert.equal((await store.decisions.read()).blocks.has(unit), false, 'nothing made of the record');
  // A record after the block by hand counts as any other.
  await log.append([c.record('198.51.100.91')]);
  await until(
    async () => (await store.decisions.read()).blocks.get(unit)?.rule === 'r',
    GUARD_MS,
    'a later record blocks it',
  );
});
