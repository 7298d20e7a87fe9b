// Another publisher on the stream's subjects (F3's threat: a shared NATS account): a message that is not a record
// holding the message id a later append uses. The append answers UNAVAILABLE instead of reading `null.id` in a
// promise callback (an unhandled rejection that would end the collector), and the next append is stored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { pino } from 'pino';
import { recordSubject } from '../../src/store/nats/names.js';
import { openStore } from '../../src/store/open-store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { until } from '../helpers/until.js';
import { record } from './contract.js';

test('NATS: a foreign message holding a dedupe key is no first delivery: UNAVAILABLE, then the next append works', async (t) => {
  const { node, dataDir, config } = await natsBackend(t, { 'nats.publishTimeoutMs': 2000 });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  t.after(() => store.close());
  await until(async () => (await store.health()).ok, 20_000, 'NATS store ready');
  const log = await store.openRecordLog();
  t.after(() => log.close());

  const nc = await connect({ servers: node.url });
  t.after(() => nc.close());
  const h = headers();
  h.set('Nats-Msg-Id', 'key-taken');
  await jetstream(nc).publish(recordSubject('generic', 'fw1'), 'null', { headers: h });

  await assert.rejects(
    log.append([record({ threat: 'first' })], { dedupeKeys: ['key-taken'] }),
    (e: unknown) =>
      (e as { code?: string }).code === 'UNAVAILABLE' && /not a threatcol record/.test(String(e)),
  );
  const ok = await log.append([record({ threat: 'second' })], { dedupeKeys: ['key-free'] });
  assert.equal(ok.ids.length, 1);
  assert.equal(ok.duplicates, 0);
});
