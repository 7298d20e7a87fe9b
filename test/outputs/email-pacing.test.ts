// The email output's interval between mails outlives the receiver built for one password: a rotated password
// file (a new receiver, rotating-secrets.ts) or a reload that restarts the output does not let a mail out early.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { createReceiver } from '../../src/outputs/receivers/create-receiver.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';
import { startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('a rotated SMTP password keeps the interval: the receiver built with it waits as the old one would', async (t) => {
  const dir = makeTempDir(t);
  const server = { implicitTls: false, user: 'alerts', password: 'first-password' };
  const smtp = await startSmtpReceiver(t, server);
  writeFileSync(join(dir, 'smtp.password'), 'first-password\n');
  writeFileSync(join(dir, 'smtp-ca.pem'), smtp.ca);
  const output = applyOutputDefaults({
    type: 'email',
    host: '127.0.0.1',
    port: smtp.port,
    ca: join(dir, 'smtp-ca.pem'),
    username: 'alerts',
    passwordFile: join(dir, 'smtp.password'),
    from: 'threatcol@collector.test',
    to: ['oncall@example.test'],
    minIntervalMs: 300_000,
  });
  const receiver = createReceiver(output, { env: {}, logger: memoryLogger().logger });
  t.after(() => receiver.close());
  await receiver.send(outgoingRecords(3), AbortSignal.timeout(30_000));
  assert.equal(smtp.mails.length, 1);
  const readyAt = receiver.readyAt?.() ?? 0;
  assert.ok(readyAt > Date.now(), 'the next mail waits for minIntervalMs');

  server.password = 'second-password';
  writeFileSync(join(dir, 'smtp.password'), 'second-password\n');
  const stop = new AbortController();
  const second = receiver.send(outgoingRecords(2), stop.signal);
  // The new password's receiver is built at once; it then waits out the interval rather than mailing now.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(receiver.readyAt?.(), readyAt, 'the interval holds across the rotated password');
  stop.abort();
  await assert.rejects(second);
  assert.equal(smtp.mails.length, 1, 'no second mail before minIntervalMs');
});
