// An engine that starts, or takes over from another collector (NATS), reads the window's records again; the blocks
// they made are already stored. Its watcher may not have shown it those yet (a take-over within a second of the
// block, on a loaded box): the engine must decide from the decisions as stored, not make each block a second time
// (logged and counted twice; a repeat offender's block remade at its first length). Nor may it undo a `block remove`
// it was not shown yet by extending the block it still sees. The real files store, with the watcher's delivery
// held back as a slow one would be.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DecisionsStore } from '../../src/store/decisions.js';
import { engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

test('an engine whose watcher has not caught up decides from the stored blocks: none is made twice', async (t) => {
  const { store, log, blocked, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
    'blocklist.repeatFactor': 2,
  });

  // The previous engine's work: a record, and the block it made, a repeat offender's (twice the rule's 24 h).
  const at = new Date(Date.now() - 60_000).toISOString();
  await log.append([record({ src_ip: '198.51.100.9', criticality: 4, received_at: at })]);
  const until48h = new Date(Date.parse(at) + 48 * 3_600_000).toISOString();
  await store.decisions.apply([
    {
      kind: 'block',
      key: '198.51.100.9/32',
      value: {
        address: '198.51.100.9/32',
        rule: 'critical',
        reason: 'critical',
        since: at,
        until: until48h,
        criticality: 4,
        records: 1,
        sensors: ['fw1'],
        who: null,
      },
    },
    { kind: 'offence', key: '198.51.100.9/32', value: { address: '198.51.100.9/32', blocks: 2, last: at } },
  ]);

  // A watcher that shows nothing for now (a slow one): the engine has only the store to go by.
  const held: DecisionsStore = {
    ...store.decisions,
    watch: () => ({ stop() {} }) as ReturnType<DecisionsStore['watch']>,
  };
  const engine = startEngine({ decisions: held });
  // The window read again (a second record, after it, shows the engine is past the scan) ...
  await log.append([record({ src_ip: '203.0.113.9', criticality: 4 })]);
  // (logged once its write is stored, and counted in the same step: the scan's blocks would be before it)
  await until(() => blocked().includes('203.0.113.9/32'), 30_000, 'the new record blocked');
  // ... made no second block of the stored one, and left it as it was.
  assert.deepEqual(blocked(), ['203.0.113.9/32'], 'one block made: the new address only');
  assert.equal(engine.counts().blocksMade.critical, 1);
  const stored = (await store.decisions.read()).blocks.get('198.51.100.9/32');
  assert.equal(stored?.until, until48h, 'the stored block keeps its length');
});

test('a block removed by hand that the engine has not been shown yet stays removed: an extension goes only over the block it extends', async (t) => {
  const { store, log, blocked, lines, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '1h' } },
  });
  const key = '198.51.100.9/32';
  const since = new Date(Date.now() - 60_000).toISOString();
  await store.decisions.apply([
    {
      kind: 'block',
      key,
      value: {
        address: key,
        rule: 'critical',
        reason: 'critical',
        since,
        until: new Date(Date.parse(since) + 3_600_000).toISOString(),
        criticality: 4,
        records: 1,
        sensors: ['fw1'],
        who: null,
      },
    },
    { kind: 'offence', key, value: { address: key, blocks: 1, last: since } },
  ]);
  // The engine knows the decisions as read at its start only (a watcher behind).
  const held: DecisionsStore = {
    ...store.decisions,
    watch: () => ({ stop() {} }) as ReturnType<DecisionsStore['watch']>,
  };
  startEngine({ decisions: held });
  await until(
    () => lines.some((l) => l.msg === "the rules' windows read again from the stored records"),
    30_000,
    'the engine started',
  );
  // `block remove`, as the command writes it.
  await store.decisions.apply([
    { kind: 'block', key, value: null },
    { kind: 'cleared', key, value: { address: key, at: new Date().toISOString() } },
  ]);
  // A record about it from a sensor the block does not name: the engine extends the block it was shown.
  await log.append([
    record({ src_ip: '198.51.100.9', criticality: 4, sensor: 'fw2' }),
    record({ src_ip: '203.0.113.9', criticality: 4 }),
  ]);
  await until(() => blocked().includes('203.0.113.9/32'), 30_000, 'the batch decided');
  assert.equal((await store.decisions.read()).blocks.has(key), false, 'the removed block stays removed');
});
