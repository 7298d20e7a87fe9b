// The engine's clean-up removes ended blocks and allow entries, every minute whether records come or not: each
// only while the store still holds it as the engine saw it, and an ended block's marks are written only over what
// it saw. A `block add` or `block remove` of the same network written meanwhile, that the engine's watcher has not
// shown it yet (a slow one, held back here), stays as written. The real files store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Block, DecisionChange, DecisionsStore, OffenceEntry } from '../../src/store/decisions.js';
import { engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';
import { block } from '../store/decisions-contract.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An engine on a store holding `ended` (a block that ended an hour ago) and an allow entry as old, whose watcher
 * shows it nothing: it knows the decisions as read at its start only. `cleanUp()` moves its clock a minute on and
 * wakes it with a record: its clean-up runs, done once the allow entry (unchanged: removed in the same write as
 * the block would be) is gone.
 */
async function heldEngine(
  t: test.TestContext,
  ended: (fields: Partial<Block>) => Block,
  also: (old: { since: string; until: string }) => DecisionChange[] = () => [],
) {
  const { store, log, lines, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  });
  let clock = Date.now();
  const old = { since: iso(clock - 2 * HOUR), until: iso(clock - HOUR) };
  const allow = { network: '203.0.113.0/24', reason: 'partner', ...old, who: 'root' };
  const made = ended(old);
  await store.decisions.apply([
    { kind: 'block', key: made.address, value: made },
    { kind: 'allow', key: allow.network, value: allow },
    ...also(old),
  ]);
  const held: DecisionsStore = {
    ...store.decisions,
    watch: () => ({ stop() {} }) as ReturnType<DecisionsStore['watch']>,
  };
  startEngine({ decisions: held, now: () => clock });
  await until(
    () => lines.some((l) => l.msg === "the rules' windows read again from the stored records"),
    30_000,
    'the engine started',
  );
  return {
    now: () => clock,
    /** Written as by another hand (the CLI): the engine is not shown it. */
    byHand: (changes: DecisionChange[]) => store.decisions.apply(changes),
    read: () => store.decisions.read(),
    async cleanUp() {
      clock += 61_000;
      await log.append([record({ src_ip: '192.0.2.77', criticality: 1 })]);
      await until(
        async () => !(await store.decisions.read()).allow.has(allow.network),
        30_000,
        'the clean-up',
      );
    },
  };
}

test("the clean-up leaves a block written since it looked: an ended block's network blocked again by hand stays", async (t) => {
  const key = '198.51.100.9/32';
  const engine = await heldEngine(t, (old) => block(key, old));
  const now = engine.now();
  const renewed = block(key, {
    rule: 'manual',
    reason: 'again',
    since: iso(now),
    until: iso(now + HOUR),
    who: 'root',
  });
  await engine.byHand([{ kind: 'block', key, value: renewed }]);
  await engine.cleanUp();
  assert.deepEqual((await engine.read()).blocks.get(key), renewed);
});

test("the clean-up's end mark of a block by hand goes only over what it saw: a `block remove` written meanwhile keeps its own", async (t) => {
  const key = '198.51.100.11/32';
  const engine = await heldEngine(t, (old) => block(key, { rule: 'manual', who: 'root', ...old }));
  // `block remove`: the block goes, and its removal's mark is written.
  const removal = { address: key, at: iso(engine.now()) };
  await engine.byHand([
    { kind: 'cleared', key, value: removal },
    { kind: 'block', key, value: null },
  ]);
  await engine.cleanUp();
  // The removal's mark, not the clean-up's end mark (store migrate carries a removal, never an end).
  assert.deepEqual((await engine.read()).cleared.get(key), removal);
});

test('a block whose end the clean-up could not write stays: removed without it, its records could make it again', async (t) => {
  const key = '198.51.100.12/32';
  let seen: OffenceEntry = { address: key, blocks: 1, last: '' };
  const engine = await heldEngine(
    t,
    (old) => block(key, old),
    (old) => {
      seen = { address: key, blocks: 1, last: old.since };
      return [{ kind: 'offence', key, value: seen }];
    },
  );
  // A collector that took over (NATS) counted the address again: the offence this engine saw is not the store's.
  await engine.byHand([{ kind: 'offence', key, value: { ...seen, blocks: 2 } }]);
  await engine.cleanUp();
  const read = await engine.read();
  assert.equal(read.blocks.has(key), true, 'the block stays until a clean-up sees its offence as it is');
  assert.deepEqual(read.offences.get(key), { ...seen, blocks: 2 });
});

test('the clean-up runs on an idle collector too: an expired allow entry goes with no record coming', async (t) => {
  const { store, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  });
  const past = iso(Date.now() - HOUR);
  const allow = { network: '203.0.113.0/24', reason: 'partner', since: past, until: past, who: 'root' };
  await store.decisions.apply([{ kind: 'allow', key: allow.network, value: allow }]);
  startEngine({ cleanUpIntervalMs: 300 });
  await until(
    async () => !(await store.decisions.read()).allow.has(allow.network),
    30_000,
    'the entry removed',
  );
});
