// The kill-twice scenario (test/outputs/kill-twice.ts) for the `email` output against a real SMTP server
// (smtp-server): greeting 421 while down, then slow, a content filter refusing mails (554). The unit is the
// digest: a mail carries a batch, so a record is taken once per mail that carries it, and a refused mail
// dead-letters exactly the records it carried. A mail names its records by Message-ID (first id, last id, count).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type ReceivedMail, startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runKillTwice } from './kill-twice.js';

/** The records each mail carried, counted: its Message-ID's range of the matching records, in store order. */
function carried(mails: readonly ReceivedMail[], matching: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const mail of mails) {
    const id = mail.headers.get('message-id') ?? '';
    const match = /^<([^.]+)\.([^.]+)\.(\d+)@threatcol>$/.exec(id);
    assert.ok(match, id);
    const first = matching.indexOf(match[1] as string);
    const ids = matching.slice(first, first + Number(match[3]));
    assert.ok(first >= 0 && ids.at(-1) === match[2], `${id}: a mail carries a run of matching records`);
    for (const r of ids) counts.set(r, (counts.get(r) ?? 0) + 1);
  }
  return counts;
}

test('email: 10,000 records, SMTP down then slow and filtering, serve killed -9 twice: no record left out', async (t) => {
  const dir = makeTempDir(t);
  const smtp = await startSmtpReceiver(t, { implicitTls: false, user: 'threatcol', password: 'pw-0123' });
  smtp.refuseText = 'REFUSED-BY-FILTER';
  writeFileSync(join(dir, 'smtp.password'), 'pw-0123\n');
  writeFileSync(join(dir, 'smtp-ca.pem'), smtp.ca);
  const { summary } = await runKillTwice(t, dir, 'oncall', {
    output: {
      type: 'email',
      host: '127.0.0.1',
      port: smtp.port,
      security: 'starttls',
      ca: join(dir, 'smtp-ca.pem'),
      username: 'threatcol',
      passwordFile: join(dir, 'smtp.password'),
      from: 'threatcol@collector.test',
      to: ['oncall@example.test'],
      minIntervalMs: 1000,
    },
    refuseMarker: smtp.refuseText,
    minCriticality: 4,
    // A digest lists its first 50 records: batches of 200 list the marked record of every other one (the 46th),
    // and the others carry theirs unlisted, so those are taken: what counts is what the server refused.
    maxRecords: 200,
    setDown(down) {
      smtp.down = down;
    },
    setSlow(slow) {
      smtp.delayMs = slow ? 300 : 0;
    },
    taken: (matching) => carried(smtp.mails, matching),
    refused: (matching) => new Set(carried(smtp.refused, matching).keys()),
  });
  t.diagnostic(`${summary}; ${smtp.mails.length} mails, ${smtp.refused.length} refused`);
});
