// Secrets as every receiver type takes them from its output (create-receiver.ts, rotating-secrets.ts): read at
// each send, so a rotated token file is used without a reload; a missing or wrong one pauses (AuthDeliveryError),
// nothing is refused for it. Through the real splunk_hec and elasticsearch receivers and their protocol servers.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { createReceiver } from '../../src/outputs/receivers/create-receiver.js';
import { AuthDeliveryError } from '../../src/outputs/receivers/receiver.js';
import { startBulkServer } from '../helpers/bulk-server.js';
import { startHecServer } from '../helpers/hec-server.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const signal = () => AbortSignal.timeout(30_000);
const DELIVERED = { refused: [], retry: [] };

test('splunk_hec: the token file is read at each send; gone or wrong pauses, rotated is taken', async (t) => {
  const dir = makeTempDir(t);
  const hec = await startHecServer(t, 'new-token');
  hec.acks = false;
  writeFileSync(join(dir, 'ca.pem'), hec.ca);
  const tokenFile = join(dir, 'hec.token');
  writeFileSync(tokenFile, 'old-token\n');
  const { logger, text } = memoryLogger();
  const receiver = createReceiver(
    applyOutputDefaults({ type: 'splunk_hec', url: hec.url, ca: join(dir, 'ca.pem'), tokenFile }),
    { env: {}, logger },
  );
  t.after(() => receiver.close());
  const records = outgoingRecords(3);

  const wrong = await receiver.send(records, signal()).catch((e: unknown) => e);
  assert.ok(wrong instanceof AuthDeliveryError, String(wrong));
  rmSync(tokenFile);
  const gone = await receiver.send(records, signal()).catch((e: unknown) => e);
  assert.ok(gone instanceof AuthDeliveryError);
  assert.match(gone.message, /cannot read the token file .*hec\.token: ENOENT/);
  writeFileSync(tokenFile, 'new-token\n');
  assert.deepEqual(await receiver.send(records, signal()), DELIVERED);
  assert.deepEqual(
    hec.events.map((e) => e.fields?.threatcol_id),
    records.map((r) => r.id),
  );
  assert.ok(!text().includes('new-token') && !text().includes('old-token'), 'no token in the log');
});

test('splunk_hec without a token, and elasticsearch with its API key from an environment variable', async (t) => {
  const dir = makeTempDir(t);
  const { logger } = memoryLogger();
  const none = createReceiver(applyOutputDefaults({ type: 'splunk_hec', url: 'https://127.0.0.1:9' }), {
    env: {},
    logger,
  });
  t.after(() => none.close());
  const missing = await none.send(outgoingRecords(1), signal()).catch((e: unknown) => e);
  assert.ok(missing instanceof AuthDeliveryError);
  assert.match(missing.message, /tokenFile or tokenEnv/);

  const bulk = await startBulkServer(t, 'ApiKey a2V5OnNlY3JldA==');
  writeFileSync(join(dir, 'ca.pem'), bulk.ca);
  const es = createReceiver(
    applyOutputDefaults({
      type: 'elasticsearch',
      url: bulk.url,
      ca: join(dir, 'ca.pem'),
      tokenEnv: 'ES_KEY',
    }),
    { env: { ES_KEY: 'a2V5OnNlY3JldA==' }, logger },
  );
  t.after(() => es.close());
  const records = outgoingRecords(2);
  assert.deepEqual(await es.send(records, signal()), DELIVERED);
  assert.deepEqual([...bulk.docs.keys()].sort(), records.map((r) => `threatcol/${r.id}`).sort());
});
