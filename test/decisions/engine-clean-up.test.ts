// The engine's clean-up removes ended blocks and allow entries, every minute whether records come or not: each
// only while the store still holds it as the engine saw it. A `block add` of the same network written meanwhile,
// that the engine's watcher has not shown it yet (a slow one, held back here), stays. The real files store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DecisionsStore } from '../../src/store/decisions.js';
import { engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';
import { block } from '../store/decisions-contract.js';

const HOUR = 3_600_000;

test("the clean-up leaves a block written since it looked: an ended block's network blocked again by hand stays", async (t) => {
  const { store, log, lines, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  });
  let clock = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const key = '198.51.100.9/32';
  const ended = block(key, { since: iso(clock - 2 * HOUR), until: iso(clock - HOUR) });
  const allow = {
    network: '203.0.113.0/24',
    reason: 'partner',
    since: iso(clock - 2 * HOUR),
    until: iso(clock - HOUR),
    who: 'root',
  };
  await store.decisions.apply([
    { kind: 'block', key, value: ended },
    { kind: 'allow', key: allow.network, value: allow },
  ]);

  // A watcher that shows nothing: the engine knows the decisions as read at its start only.
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
  // By hand, the network blocked again (`block add`); the engine is not shown it.
  const renewed = block(key, {
    rule: 'manual',
    reason: 'again',
    since: iso(clock),
    until: iso(clock + HOUR),
    who: 'root',
  });
  await store.decisions.apply([{ kind: 'block', key, value: renewed }]);

  // A minute on: the clean-up runs (at the next batch: a record wakes the engine rather than its minute's timer).
  // The expired allow entry, unchanged, goes in the same write as the block would.
  clock += 61_000;
  await log.append([record({ src_ip: '192.0.2.77', criticality: 1 })]);
  await until(
    async () => !(await store.decisions.read()).allow.has(allow.network),
    30_000,
    'the clean-up done',
  );
  assert.deepEqual((await store.decisions.read()).blocks.get(key), renewed);
});

test("the clean-up's end mark of a block by hand goes only over what it saw: a `block remove` written meanwhile keeps its own", async (t) => {
  const { store, log, lines, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  });
  let clock = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const key = '198.51.100.11/32';
  const ended = block(key, {
    rule: 'manual',
    who: 'root',
    since: iso(clock - 2 * HOUR),
    until: iso(clock - HOUR),
  });
  const allow = {
    network: '203.0.113.0/24',
    reason: 'partner',
    since: iso(clock - 2 * HOUR),
    until: iso(clock - HOUR),
    who: 'root',
  };
  await store.decisions.apply([
    { kind: 'block', key, value: ended },
    { kind: 'allow', key: allow.network, value: allow },
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
  // By hand, `block remove`: the block goes, and its removal's mark is written; the engine is not shown it.
  const removal = { address: key, at: iso(clock) };
  await store.decisions.apply([
    { kind: 'cleared', key, value: removal },
    { kind: 'block', key, value: null },
  ]);
  clock += 61_000;
  await log.append([record({ src_ip: '192.0.2.78', criticality: 1 })]);
  await until(
    async () => !(await store.decisions.read()).allow.has(allow.network),
    30_000,
    'the clean-up done',
  );
  // The removal's mark, not the clean-up's end mark (store migrate carries a removal, never an end).
  assert.deepEqual((await store.decisions.read()).cleared.get(key), removal);
});

test('the clean-up runs on an idle collector too: an expired allow entry goes with no record coming', async (t) => {
  const { store, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  });
  const past = new Date(Date.now() - HOUR).toISOString();
  const allow = { network: '203.0.113.0/24', reason: 'partner', since: past, until: past, who: 'root' };
  await store.decisions.apply([{ kind: 'allow', key: allow.network, value: allow }]);
  startEngine({ cleanUpIntervalMs: 300 });
  await until(
    async () => !(await store.decisions.read()).allow.has(allow.network),
    30_000,
    'the entry removed',
  );
});
