// The KV watch both NATS readers share (store/nats/watch-bucket.ts), against a real nats-server: a reader that
// throws on a state it is given is reported through onError and keeps being told of later changes, for the
// decisions as for the registry, rather than ending the process from a timer.
import assert from 'node:assert/strict';
import test from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import type { DecisionsState } from '../../src/store/decisions.js';
import { watchBucket } from '../../src/store/nats/watch-bucket.js';
import { openStore } from '../../src/store/open-store.js';
import type { Sensor } from '../../src/store/registry.js';
import { natsBackend, startNatsServer } from '../helpers/nats-server.js';
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

test('nats: a live change taken while a full re-read is under way is not undone by that read', async (t) => {
  const node = await startNatsServer(t);
  const nc = await connect({ servers: node.url });
  t.after(() => nc.close());
  const kv = await new Kvm(nc).create('watch_race');
  await kv.put('revoked', 'yes');
  await kv.put('kept', 'yes');

  // The reader's state: a full read replaces it whole, a live entry changes one key.
  let state = new Map<string, string>();
  /** Reads begun, and reads whose result is in `state`. */
  let readsBegun = 0;
  let readsDone = 0;
  // The second read (the one asked below) takes its snapshot, then waits to be let go: a read slowed by an election.
  let snapshotTaken: () => void = () => {};
  const snapshot = new Promise<void>((resolve) => {
    snapshotTaken = resolve;
  });
  let letGo: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const errors: Error[] = [];
  const watch = watchBucket({
    bucket: async () => kv,
    async reread() {
      const read = new Map<string, string>();
      for await (const key of await kv.keys()) {
        const entry = await kv.get(key);
        if (entry?.operation === 'PUT') read.set(key, entry.string());
      }
      if (++readsBegun === 2) {
        snapshotTaken();
        await gate;
      }
      state = read;
      readsDone++;
    },
    take(entry) {
      if (entry.operation === 'PUT') state.set(entry.key, entry.string());
      else state.delete(entry.key);
    },
    changed() {},
    onError: (error) => errors.push(error),
    rereadIntervalMs: 3_600_000,
  });
  t.after(() => watch.stop());
  await until(() => readsDone === 1 && state.has('revoked'), GUARD_MS, 'the first read');
  // The watcher is open once a live put is seen.
  await kv.put('probe', 'yes');
  await until(() => state.has('probe'), GUARD_MS, 'the watcher live');

  watch.reload();
  await snapshot;
  await kv.delete('revoked');
  await until(() => !state.has('revoked'), GUARD_MS, 'the delete taken live');
  letGo();
  await until(() => readsDone === 2, GUARD_MS, 'the slow read done');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(
    state.has('revoked'),
    false,
    'the read that began before the delete must not bring the key back',
  );
  assert.equal(state.get('kept'), 'yes');
  assert.deepEqual(errors, []);
});
