// A new output on NATS whose consumer cannot be made when it starts (here the stream's consumer limit, taken; as
// well NATS unreachable, a cluster still electing): its start is still the moment it started, so the records
// stored until the consumer can be made are forwarded too, and meanwhile its status says why it cannot read. The
// real forwarder, a real nats-server, a loopback webhook receiver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { startForwarder } from '../../src/outputs/forwarder.js';
import { recordsStreamConfig } from '../../src/store/nats/nats-setup.js';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';
import { startReceiver } from './webhook-receiver.js';

test('nats: a new output whose consumer cannot be made yet forwards what was stored meanwhile, and shows why it waits', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const { node, dataDir, config } = await natsBackend(t, {
    outputs: { hook: { type: 'webhook', url: receiver.url, batch: { maxWaitMs: 50 } } },
  });
  const output = config.outputs.hook;
  assert.ok(output);
  // The records stream made beforehand with room for one consumer, and that one taken.
  const nc = await connect({ servers: [node.url] });
  t.after(() => nc.close());
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ ...recordsStreamConfig(config), max_consumers: 1 });
  await jsm.consumers.add(config.nats.stream, { durable_name: 'blocker', ack_policy: AckPolicy.Explicit });

  const logger = pino({ level: 'silent' });
  const store = await openNatsStore(config, { logger, dataDir });
  const log = await store.openRecordLog();
  const forwarder = startForwarder({
    name: 'hook',
    output,
    cursors: store.outputs,
    dataDir,
    owner: null,
    logger,
    env: {},
    now: Date.now,
  });
  t.after(async () => {
    await forwarder.stop();
    await log.close();
    await store.close();
  });
  await forwarder.started;
  await until(
    () => /maximum consumers/i.test(forwarder.status.lastError ?? ''),
    30_000,
    'the output says why it cannot read',
  );
  assert.equal(forwarder.status.state, 'retrying');
  assert.notEqual(forwarder.status.failingSince, null);

  const { ids } = await log.append(Array.from({ length: 5 }, (_, i) => record({ threat: `meanwhile${i}` })));
  await jsm.consumers.delete(config.nats.stream, 'blocker');
  await until(
    () => ids.every((id) => receiver.accepted.has(id)),
    60_000,
    'every record stored since the output started is forwarded',
  );
  await until(() => forwarder.status.state === 'running', 30_000, 'the output runs again');
  assert.equal(forwarder.status.failingSince, null);
});
