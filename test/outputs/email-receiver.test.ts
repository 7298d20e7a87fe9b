// The email receiver against a real SMTP server (smtp-server) on loopback: STARTTLS and implicit TLS verified
// against the output's CA, AUTH, one digest mail per batch, the interval between mails, and the server's
// answers (451 then success, 535, a refused recipient, a refused message).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DIGEST_LISTED } from '../../src/outputs/receivers/email-digest.js';
import {
  createEmailReceiver,
  type EmailDeps,
  type EmailOptions,
} from '../../src/outputs/receivers/email-receiver.js';
import { AuthDeliveryError, TransientDeliveryError } from '../../src/outputs/receivers/receiver.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';
import { type SmtpReceiver, startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { until } from '../helpers/until.js';

const PASSWORD = 's3cret-smtp-Pa55';
const signal = () => AbortSignal.timeout(30_000);

const options = (smtp: SmtpReceiver, overrides: Partial<EmailOptions> = {}): EmailOptions => ({
  host: '127.0.0.1',
  port: smtp.port,
  security: 'starttls',
  ca: smtp.ca,
  username: 'alerts',
  password: PASSWORD,
  from: 'threatcol@collector.example',
  to: ['oncall@example.org'],
  subjectPrefix: '[threatcol]',
  minIntervalMs: 300_000,
  connectTimeoutMs: 5000,
  socketTimeoutMs: 10_000,
  ...overrides,
});

async function setUp(
  t: { after(fn: () => unknown): void },
  overrides: Partial<EmailOptions> = {},
  deps: Partial<EmailDeps> = {},
  server: { implicitTls?: boolean; refuseRecipient?: string } = {},
) {
  const smtp = await startSmtpReceiver(t, {
    implicitTls: server.implicitTls ?? false,
    user: 'alerts',
    password: PASSWORD,
    ...(server.refuseRecipient !== undefined ? { refuseRecipient: server.refuseRecipient } : {}),
  });
  const log = memoryLogger();
  const receiver = createEmailReceiver(options(smtp, overrides), {
    logger: log.logger,
    collector: 'fw-collector',
    ...deps,
  });
  t.after(() => receiver.close());
  return { smtp, receiver, log };
}

test('a flood of 5,000 records is one mail over STARTTLS with AUTH: counts by criticality, the first 50 listed', async (t) => {
  const { smtp, receiver, log } = await setUp(t);
  const records = outgoingRecords(5000, (i) => ({
    criticality: i % 10 === 0 ? 4 : 3,
    threat: `brute\nforce ${i} é`,
  }));
  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  assert.equal(smtp.mails.length, 1);
  const mail = smtp.mails[0];
  assert.ok(mail);
  assert.equal(mail.secure, true);
  assert.equal(mail.user, 'alerts');
  assert.equal(mail.from, 'threatcol@collector.example');
  assert.deepEqual(mail.to, ['oncall@example.org']);
  assert.equal(mail.headers.get('subject'), '[threatcol] 5000 threats: 500 critical, 4500 high');
  assert.equal(mail.headers.get('message-id'), `<${records[0]?.id}.${records[4999]?.id}.5000@threatcol>`);
  const lines = mail.text.split('\n');
  assert.match(mail.text, /^threatcol on fw-collector: 5000 threats received from /);
  assert.match(mail.text, /\n {2}4 critical {6}\s+500\n {2}3 high {10}\s+4500\n/);
  const listed = lines.filter((line) => / id [0-9a-f-]{36}$/.test(line));
  assert.equal(listed.length, DIGEST_LISTED);
  listed.forEach((line, i) => {
    assert.ok(line.endsWith(` id ${records[i]?.id}`));
    assert.ok(line.includes(`brute force ${i} é`), 'a line break in a record stays on its line');
  });
  assert.ok(lines.includes('... and 4950 more (threatcol threats tail, or the dashboard).'));
  assert.ok(!log.text().includes(PASSWORD), 'the password is never logged');
});

test('at most one mail per minIntervalMs: the next batch waits out the interval, abortably', async (t) => {
  let clock = 1_000_000;
  const waits: { ms: number; release: () => void }[] = [];
  const { smtp, receiver } = await setUp(
    t,
    {},
    {
      now: () => clock,
      wait: (ms, waitSignal) =>
        new Promise<void>((resolve, reject) => {
          waits.push({ ms, release: resolve });
          waitSignal.addEventListener('abort', () => reject(waitSignal.reason), { once: true });
        }),
    },
  );
  await receiver.send(outgoingRecords(2), signal());
  assert.equal(receiver.readyAt(), 1_300_000);
  clock += 120_000;
  const second = outgoingRecords(3);
  const sending = receiver.send(second, signal());
  await until(() => waits.length > 0, 10_000, 'the receiver waits', 1);
  assert.equal(waits[0]?.ms, 180_000);
  assert.equal(smtp.mails.length, 1, 'no mail before the interval is over');
  clock += 180_000;
  waits[0]?.release();
  await sending;
  assert.equal(smtp.mails.length, 2);
  assert.match(smtp.mails[1]?.headers.get('subject') ?? '', /^\[threatcol\] 3 threats/);

  const controller = new AbortController();
  const aborted = receiver.send(outgoingRecords(1), controller.signal);
  await until(() => waits.length > 1, 10_000, 'the receiver waits again', 1);
  controller.abort(new Error('reload'));
  await assert.rejects(aborted, /reload/);
  assert.equal(smtp.mails.length, 2);
});

test('451 from the server is transient and moves no interval; sent again, the mail goes through', async (t) => {
  const waited: number[] = [];
  const { smtp, receiver } = await setUp(t, {}, { wait: async (ms) => void waited.push(ms) });
  smtp.failData.push({ code: 451, text: 'Requested action aborted: local error in processing' });
  const records = outgoingRecords(4);
  await assert.rejects(receiver.send(records, signal()), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.match(error.message, /451/);
    return true;
  });
  assert.deepEqual(await receiver.send(records, signal()), { refused: [], retry: [] });
  assert.deepEqual(waited, []);
  assert.equal(smtp.mails.length, 1);
});

test('535 (bad password) and every recipient refused pause the output; a refused message refuses the batch', async (t) => {
  const { receiver: badPassword } = await setUp(t, { password: 'wrong' });
  await assert.rejects(badPassword.send(outgoingRecords(1), signal()), (error) => {
    assert.ok(error instanceof AuthDeliveryError);
    assert.match(error.message, /535/);
    return true;
  });

  const {
    smtp,
    receiver: badRecipient,
    log,
  } = await setUp(t, { to: ['nobody@example.org'] }, {}, { refuseRecipient: 'nobody@example.org' });
  await assert.rejects(badRecipient.send(outgoingRecords(1), signal()), (error) => {
    assert.ok(error instanceof AuthDeliveryError);
    assert.match(error.message, /550 .*every recipient refused/);
    return true;
  });
  // The same server with a second, valid recipient: the mail goes to that one.
  const partly = createEmailReceiver(
    options(smtp, { to: ['nobody@example.org', 'oncall@example.org'], minIntervalMs: 1 }),
    {
      logger: log.logger,
    },
  );
  assert.deepEqual(await partly.send(outgoingRecords(1), signal()), { refused: [], retry: [] });
  assert.deepEqual(smtp.mails[0]?.to, ['oncall@example.org']);
  assert.match(log.text(), /refused some recipients/);

  smtp.failData.push({ code: 554, text: 'Message rejected as spam' });
  const report = await partly.send(outgoingRecords(3), signal());
  assert.deepEqual(
    report.refused.map((refused) => refused.index),
    [0, 1, 2],
  );
  assert.match(report.refused[0]?.answer ?? '', /554 .*Message rejected as spam/);
});

test('implicit TLS works, and a server certificate the CA did not sign is transient, nothing sent', async (t) => {
  const { smtp, receiver } = await setUp(t, { security: 'tls' }, {}, { implicitTls: true });
  await receiver.send(outgoingRecords(1), signal());
  assert.equal(smtp.mails[0]?.secure, true);

  const other = await startSmtpReceiver(t, { implicitTls: false, user: 'x', password: 'y' });
  const untrusted = createEmailReceiver(options(smtp, { security: 'tls', ca: other.ca }), {
    logger: memoryLogger().logger,
  });
  await assert.rejects(untrusted.send(outgoingRecords(1), signal()), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.match(error.message, /certificate|self.signed/i);
    return true;
  });
  assert.equal(smtp.mails.length, 1);
});
