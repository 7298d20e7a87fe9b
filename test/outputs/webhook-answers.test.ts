// The webhook receiver against a real loopback HTTPS server: what each answer becomes (delivered, retried with
// Retry-After, paused, dead-lettered), the signature, and TLS verified against the output's `ca` only.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { AuthDeliveryError, TransientDeliveryError } from '../../src/outputs/receivers/receiver.js';
import { createWebhookReceiver } from '../../src/outputs/receivers/webhook.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { loadTlsMaterial } from '../../src/tls/tls-material.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('webhook over HTTPS: 2xx delivered, 429/503 retried with Retry-After, 401 paused, 400 refused, signed body', async (t) => {
  const dir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir: dir },
  });
  const tls = await loadTlsMaterial(config.tls, dir, null);
  const answers: { status: number; headers?: Record<string, string> }[] = [];
  const seen: { body: string; headers: Record<string, string | string[] | undefined> }[] = [];
  const server = createServer(
    { cert: readFileSync(tls.certPath), key: readFileSync(tls.keyPath) },
    (req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        seen.push({ body, headers: req.headers });
        const answer = answers.shift() ?? { status: 200 };
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(`answer ${answer.status}`);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/in?x=1`;
  writeFileSync(join(dir, 'secret'), 's3cret\n');
  const output = applyOutputDefaults({
    type: 'webhook',
    url,
    ca: tls.certPath,
    secretFile: join(dir, 'secret'),
  });
  const receiver = createWebhookReceiver(output, {});
  t.after(() => receiver.close());
  const records = [1, 2].map(() => {
    const record = storedGenericRecord() as unknown as StoredRecord;
    return { id: record.id, line: JSON.stringify(record), head: record, record };
  });
  const signal = AbortSignal.timeout(10_000);

  assert.deepEqual(await receiver.send(records, signal), { refused: [], retry: [] });
  const first = seen[0];
  assert.equal(first?.body, `{"records":[${records[0]?.line},${records[1]?.line}]}`);
  assert.equal(
    first?.headers['x-threatcol-signature'],
    `sha256=${createHmac('sha256', 's3cret')
      .update(first?.body ?? '')
      .digest('hex')}`,
  );
  assert.match(String(first?.headers['idempotency-key']), /^[0-9a-f]{32}$/);

  answers.push({ status: 429, headers: { 'retry-after': '7' } });
  const limited = await receiver.send(records, signal).catch((e: unknown) => e);
  assert.ok(limited instanceof TransientDeliveryError);
  assert.equal(limited.retryAfterMs, 7000);
  answers.push({ status: 503 });
  assert.ok(
    (await receiver.send(records, signal).catch((e: unknown) => e)) instanceof TransientDeliveryError,
  );
  answers.push({ status: 401 });
  const auth = await receiver.send(records, signal).catch((e: unknown) => e);
  assert.ok(auth instanceof AuthDeliveryError);
  assert.match(auth.message, /HTTP 401: answer 401/);
  answers.push({ status: 400 });
  assert.deepEqual(await receiver.send(records, signal), {
    refused: [
      { index: 0, answer: 'HTTP 400: answer 400' },
      { index: 1, answer: 'HTTP 400: answer 400' },
    ],
    retry: [],
  });

  // Without its `ca`, the self-signed receiver is not trusted: a transient failure, never a delivery.
  const untrusted = createWebhookReceiver(applyOutputDefaults({ type: 'webhook', url }), {});
  t.after(() => untrusted.close());
  const before = seen.length;
  const refused = await untrusted.send(records, signal).catch((e: unknown) => e);
  assert.ok(refused instanceof TransientDeliveryError, String(refused));
  assert.equal(seen.length, before);

  // A secret file that is gone is a credential problem: paused, not dead-lettered.
  const missing = createWebhookReceiver(
    applyOutputDefaults({ type: 'webhook', url, ca: tls.certPath, secretFile: join(dir, 'gone') }),
    {},
  );
  t.after(() => missing.close());
  const gone = await missing.send(records, signal).catch((e: unknown) => e);
  assert.ok(gone instanceof AuthDeliveryError);
  assert.match(gone.message, /cannot read the secret file .*gone: ENOENT/);
});
