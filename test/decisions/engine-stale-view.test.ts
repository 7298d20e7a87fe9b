// An engine that starts, or takes over from another collector (NATS), reads the window's records again; the blocks
// they made are already stored. Its watcher may not have shown it those yet (a take-over within a second of the
// block, on a loaded box): the engine must decide from the decisions as stored, not make each block a second time
// (logged and counted twice; a repeat offender's block remade at its first length). The real files store, with the
// watcher's delivery held back as a slow one would be.
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
