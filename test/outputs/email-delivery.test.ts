// An `email` output end to end through the real binary (DESIGN 13), against a real SMTP server (smtp-server) over
// STARTTLS with AUTH: a flood of 500 critical records is a few digest mails, not 500, and every record is in one.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { genericRecord, readStored } from '../helpers/records.js';
import { startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, untilDrained } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';

const FLOOD = 500;

test('email: a flood of 500 critical records gives a few digests that together carry every record', async (t) => {
  const dir = makeTempDir(t);
  const smtp = await startSmtpReceiver(t, { implicitTls: false, user: 'threatcol', password: 'pw-0123' });
  writeFileSync(join(dir, 'smtp.password'), 'pw-0123\n');
  writeFileSync(join(dir, 'smtp-ca.pem'), smtp.ca);
  const { post, testOutput } = await serveWithOutputs(t, dir, {
    oncall: {
      type: 'email',
      host: '127.0.0.1',
      port: smtp.port,
      security: 'starttls',
      ca: join(dir, 'smtp-ca.pem'),
      username: 'threatcol',
      passwordFile: join(dir, 'smtp.password'),
      from: 'threatcol@collector.test',
      to: ['oncall@example.test'],
      minIntervalMs: 2000,
      filter: { minCriticality: 4 },
      startAt: 'oldest',
    },
  });
  // The flood: critical records, with low ones between them that the filter passes over.
  await post(
    Array.from({ length: FLOOD * 2 }, (_, i) =>
      genericRecord({ threat: `flood ${i}`, criticality: i % 2 === 0 ? 4 : 1 }),
    ),
  );
  const critical = readStored(dir)
    .filter((r) => r.criticality === 4)
    .map((r) => r.id as string);
  assert.equal(critical.length, FLOOD);

  /** Each mail's Message-ID is <first id.last id.count@threatcol>: the mails must tile the critical records. */
  const covered = () => {
    let at = 0;
    for (const mail of smtp.mails) {
      const match = /^<([^.]+)\.([^.]+)\.(\d+)@threatcol>$/.exec(mail.headers.get('message-id') ?? '');
      assert.ok(match, mail.headers.get('message-id') ?? 'no Message-ID');
      const count = Number(match[3]);
      assert.equal(match[1], critical[at], 'a mail starts where the previous one ended');
      assert.equal(match[2], critical[at + count - 1], 'a mail ends at its count');
      at += count;
    }
    return at;
  };
  await untilDrained(() => FLOOD - covered(), OUTPUTS_THREAD_MS, 'every critical record mailed');
  assert.equal(covered(), FLOOD, 'every record in exactly one mail');
  t.diagnostic(`${smtp.mails.length} mails for ${FLOOD} critical records`);
  assert.ok(smtp.mails.length <= 3, `a flood is a few mails, not ${smtp.mails.length}`);
  const [first] = smtp.mails;
  assert.ok(first?.secure, 'STARTTLS');
  assert.equal(first?.user, 'threatcol');
  assert.deepEqual(first?.to, ['oncall@example.test']);
  assert.match(first?.text ?? '', /By criticality:\n {2}4 critical +\d+\n/);
  assert.match(first?.text ?? '', new RegExp(`id ${critical[0]}\n`));
  assert.ok(smtp.mails.every((m) => !/ 1 (low|notice)/.test(m.headers.get('subject') ?? '')));

  const before = smtp.mails.length;
  const sampleId = await testOutput('oncall');
  assert.equal(smtp.mails.length, before + 1);
  assert.match(smtp.mails.at(-1)?.text ?? '', new RegExp(`threatcol outputs test .* id ${sampleId}`));
});
