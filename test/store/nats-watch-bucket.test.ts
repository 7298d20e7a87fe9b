// The KV watch both NATS readers share (store/nats/watch-bucket.ts), against a real nats-server: a reader that
// throws on a state it is given is reported through onError and keeps being told of later changes, for the
// decisions as for the registry, rather than ending the process from a timer.
import assert from 'node:assert/strict';
import test from 'node:test';
import { pino } from 'pino';
import type { DecisionsState } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import type { Sensor } from '../../src/store/registry.js';
import { natsBackend } from '../helpers/nats-server.js';
import { until } from '../helpers/until.js';
import { block } from './decisions-contract.js';

const GUARD_MS = 20_000;

test('nats: a decisions watcher and a registry watcher whose reader throws report it and see the next change', async (t) => {
  const { dataDir, config } = await natsBackend(t);
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  await until(async () => (await store.health()).ok, GUARD_MS, 'the store is healthy');

  const errors: string[] = [];
  let states = 0;
  let blocks: DecisionsState['blocks'] | null = null;
  const decisions = store.decisions.watch(
    (state) => {
      if (++states === 1) throw new Error('decisions reader failed');
      blocks = state.blocks;
    },
    (error) => errors.push(error.message),
  );
  t.after(() => decisions.stop());
  let sensorStates = 0;
  let sensors: Sensor[] | null = null;
  const registry = store.registry.watch(
    (all) => {
      if (++sensorStates === 1) throw new Error('registry reader failed');
      sensors = all;
    },
    (error) => errors.push(error.message),
  );
  t.after(() => registry.stop());
  await until(() => errors.length === 2, GUARD_MS, 'both failures reported');
  assert.deepEqual(errors.sort(), ['decisions reader failed', 'registry reader failed']);

  const address = '192.0.2.9/32';
  await store.decisions.apply([{ kind: 'block', key: address, value: block(address) }]);
  await store.registry.add({ name: 'fw' });
  await until(
    () => (blocks as DecisionsState['blocks'] | null)?.has(address) === true,
    GUARD_MS,
    'the block seen after the failure',
  );
  await until(
    () => (sensors as Sensor[] | null)?.some((s) => s.name === 'fw') === true,
    GUARD_MS,
    'the sensor seen after the failure',
  );
});
