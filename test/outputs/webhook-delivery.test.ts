// The webhook output end to end through the real binary (DESIGN 13): the kill-twice scenario against a loopback
// webhook that is down, slow and refusing, then its signature and `outputs list`; and a malformed output.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { runKillTwice } from './kill-twice.js';
import { type ListedOutput, listedOutputs, serveRefusing } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

const isPoison = (threat: string) => threat.startsWith('poison');

test('webhook: 10,000 records through a receiver down, then slow and refusing, with two kill -9: none skipped', async (t) => {
  const dir = makeTempDir(t);
  const secret = 'test-secret-0123456789';
  writeFileSync(join(dir, 'hook.secret'), `${secret}\n`);
  const receiver = await startReceiver({ secret, refuse: isPoison });
  t.after(() => receiver.close());
  const { serve, config, summary } = await runKillTwice(t, dir, 'hook', {
    output: { type: 'webhook', url: receiver.url, secretFile: join(dir, 'hook.secret') },
    refuseMarker: 'poison',
    setDown(down) {
      receiver.mode = down ? 'down' : 'up';
    },
    setSlow(slow) {
      receiver.delayMs = slow ? 30 : 0;
    },
    taken: () => receiver.accepted,
    // A webhook has no per-record answer: every record of a batch answered 400 is refused.
    refused: () => receiver.refused,
  });
  t.diagnostic(summary);
  assert.equal(receiver.badSignatures, 0, 'every body carries a valid X-Threatcol-Signature');
  assert.ok(receiver.bodies.every((b) => typeof b.headers['idempotency-key'] === 'string'));

  // The state is visible from the daemon while it runs; the thread reports its position now and then, so a
  // busy box may show the lag of a moment ago: it reaches 0.
  let hook: ListedOutput | undefined;
  await until(
    async () => {
      [hook] = await listedOutputs(dir, config, serve);
      return hook?.position.lagRecords === 0;
    },
    60_000,
    'the lag shown as 0',
    500,
  ).catch(() => assert.fail(`outputs list shows ${JSON.stringify(hook)}`));
  assert.equal(hook?.name, 'hook');
  assert.equal(hook?.state, 'running');
});

test('a malformed output stops serve with 78, naming the output and the key', async (t) => {
  const dir = makeTempDir(t);
  const stderr = await serveRefusing(dir, {
    oncall: { type: 'webhook', url: 'http://127.0.0.1:9/x', fromat: 'slack' },
  });
  assert.match(
    stderr,
    /outputs\.oncall\.fromat: unknown key of the webhook output "oncall" \(did you mean format\?\)/,
  );
  assert.match(
    await serveRefusing(dir, { siem: { type: 'splunk', url: 'https://x' } }),
    /outputs\.siem\.type: must be one of/,
  );
});
