// A block kept in force for more than 30 days (a scanner seen every day extends it) keeps its offence: the
// clean-up drops an offence 30 days after its block was made, and the engine then took the next extension for a
// block whose offence a cut write had lost, logging and counting it as made again at each extension.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blockChange, engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const DAY = 86_400_000;

test('a block in force for over 30 days keeps its offence: its extensions are not blocks made again', async (t) => {
  const { store, log, blocked, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  });

  // Made 31 days ago and extended since (its end an hour away).
  const since = new Date(Date.now() - 31 * DAY).toISOString();
  const unit = '198.51.100.9/32';
  await store.decisions.apply([
    blockChange(unit, Date.parse(since), Date.now() + 3_600_000, {
      rule: 'critical',
      reason: 'critical',
      records: 1,
      sensors: ['fw1'],
      who: null,
    }),
    { kind: 'offence', key: unit, value: { address: unit, blocks: 1, last: since } },
  ]);
  let offset = 0;
  const engine = startEngine({ now: () => Date.now() + offset });
  await log.append([record({ src_ip: '203.0.113.1', criticality: 4 })]);
  await until(() => blocked().includes('203.0.113.1/32'), 30_000, 'the first record blocked');
  // A minute on: the next batch is followed by the clean-up.
  offset = 61_000;
  await log.append([record({ src_ip: '203.0.113.2', criticality: 4 })]);
  await until(() => blocked().includes('203.0.113.2/32'), 30_000, 'the second record blocked');
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The scanner again: its block is extended, not made.
  await log.append([record({ src_ip: '198.51.100.9', criticality: 4 })]);
  await log.append([record({ src_ip: '203.0.113.3', criticality: 4 })]);
  await until(() => blocked().includes('203.0.113.3/32'), 30_000, 'the last record blocked');
  const state = await store.decisions.read();
  assert.ok(
    Date.parse(state.blocks.get(unit)?.until ?? '') > Date.now() + 20 * 3_600_000,
    'extended by 24 h',
  );
  assert.equal(state.blocks.get(unit)?.since, since);
  assert.deepEqual(blocked(), ['203.0.113.1/32', '203.0.113.2/32', '203.0.113.3/32']);
  assert.equal(engine.counts().blocksMade.critical, 3);
  assert.equal(state.offences.get(unit)?.last, since, 'its offence kept while it is in force');
});
