// The real collector (`serve`) forwarding to a webhook that answers in ways it must survive: 200 with a body
// that never ends (memory measured against a baseline of the same process), 200 with a body trickled a byte at a
// time, and a redirect (retried and shown as the output's last error, never dead-lettered).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { rssBytes } from '../reliability/support.js';
import { serveWithOutputs } from './output-serve.js';
import { startReceiver } from './webhook-receiver.js';

const MiB = 1024 * 1024;
/** What the collector may grow by while answers never end: each answer is read to a small cap, then dropped. */
const RSS_BOUND = 96 * MiB;

interface Listed {
  name: string;
  state: string;
  lastError: string | null;
  deadLetterFile: number;
  position: { lagRecords: number } | null;
}

async function setUp(t: { after(fn: () => unknown): void }) {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const served = await serveWithOutputs(t, dir, {
    hook: { type: 'webhook', url: receiver.url, timeoutMs: 2000, batch: { maxRecords: 50, maxWaitMs: 50 } },
  });
  const admin = new URL(served.serve.adminUrl as string).host;
  const list = async (json = true) => {
    const args = ['outputs', 'list', '--data-dir', dir, '--config', served.config, '--admin-listen', admin];
    const listed = await runCli(json ? [...args, '--json'] : args);
    assert.equal(listed.code, 0, listed.stderr);
    return listed.stdout;
  };
  const hook = async () => {
    const [output] = JSON.parse(await list()).outputs as Listed[];
    assert.equal(output?.name, 'hook');
    return output;
  };
  let sent = 0;
  /** Posts `n` records and waits until the receiver has been sent them all (`check` runs at each poll). */
  const deliver = async (n: number, check: () => void = () => {}) => {
    await served.post(Array.from({ length: n }, (_, i) => genericRecord({ threat: `hostile ${sent + i}` })));
    sent += n;
    await until(
      () => {
        check();
        return receiver.accepted.size === sent;
      },
      60_000,
      `${sent} records at the receiver`,
      50,
    );
  };
  return { receiver, served, hook, list, deliver };
}

test('a webhook answering 200 with a body without end: memory stays bounded and delivery goes on', async (t) => {
  const { receiver, served, hook, deliver } = await setUp(t);
  const pid = served.serve.child.pid as number;
  await deliver(200);
  await deliver(200);
  const baseline = rssBytes(pid);
  let peak = baseline;
  const watch = () => {
    const rss = rssBytes(pid);
    peak = Math.max(peak, rss);
    if (rss - baseline > RSS_BOUND)
      throw new Error(`RSS grew by ${Math.round((rss - baseline) / MiB)} MiB over ${baseline / MiB} MiB`);
  };
  receiver.mode = 'endless';
  const started = Date.now();
  let rounds = 0;
  // At least 8 s of endless answers, each batch delivered (the cursor moves on) before the next is posted.
  while (rounds < 10 || Date.now() - started < 8000) {
    await deliver(50, watch);
    rounds += 1;
  }
  receiver.mode = 'up';
  await deliver(50, watch);
  await until(async () => (await hook())?.position?.lagRecords === 0, 60_000, 'lag 0', 200);
  const output = await hook();
  assert.equal(output?.state, 'running');
  assert.equal(output?.deadLetterFile, 0);
  assert.ok(receiver.cut >= rounds, `${receiver.cut} answers cut for ${rounds} batches`);
  t.diagnostic(
    `RSS baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB (+${((peak - baseline) / MiB).toFixed(1)}) ` +
      `over ${rounds} endless answers in ${Date.now() - started} ms; ${(receiver.hostileBytes / MiB).toFixed(1)} MiB offered`,
  );
});

test('a webhook answering 200 with a body trickled a byte at a time: each batch ends at the deadline', async (t) => {
  const { receiver, hook, deliver } = await setUp(t);
  await deliver(20);
  receiver.mode = 'trickle';
  // Each batch waits out the 2 s answer deadline, then the next is sent: the forwarder is never held for good.
  await deliver(20);
  await deliver(20);
  await deliver(20);
  assert.ok(receiver.cut >= 2, `${receiver.cut} answers cut`);
  receiver.mode = 'up';
  await deliver(20);
  await until(async () => (await hook())?.position?.lagRecords === 0, 60_000, 'lag 0', 200);
  assert.equal((await hook())?.deadLetterFile, 0);
});

test('a webhook answering 302: retried and shown as the last error, nothing dead-lettered; a 400 shown too', async (t) => {
  const { receiver, served, hook, list, deliver } = await setUp(t);
  await deliver(20);
  receiver.mode = 'redirect';
  await served.post(Array.from({ length: 30 }, (_, i) => genericRecord({ threat: `moved ${i}` })));
  const settled = async () => {
    const output = await hook();
    return output?.state !== 'running' || (output?.deadLetterFile ?? 0) > 0;
  };
  await until(settled, 60_000, 'the output reacting to the redirect', 200);
  const output = await hook();
  assert.equal(output?.deadLetterFile, 0, 'a redirect refuses nothing');
  assert.equal(output?.state, 'retrying');
  assert.match(
    output?.lastError ?? '',
    /^HTTP 302: redirected to https:\/\/hooks\.example\/moved, not followed/,
  );
  assert.match(await list(false), /retrying .*HTTP 302: redirected to https:\/\/hooks\.example\/moved/);
  // Once the URL answers again (here: the receiver fixed), the held records go out.
  receiver.mode = 'up';
  await until(() => receiver.accepted.size === 50, 60_000, 'the held records delivered', 100);
  await until(async () => (await hook())?.state === 'running', 60_000, 'running again', 200);
  assert.equal((await hook())?.deadLetterFile, 0);
  // A genuine refusal (400) dead-letters the batch and moves on, and says so as the last error.
  receiver.refuse = (threat) => threat.startsWith('refused');
  await served.post([genericRecord({ threat: 'refused by the receiver' })]);
  await until(
    async () => (await hook())?.deadLetterFile === 1,
    60_000,
    'the refused record dead-lettered',
    200,
  );
  const refused = await hook();
  assert.equal(refused?.state, 'running');
  assert.match(
    refused?.lastError ?? '',
    /^1 records refused, dead-lettered: HTTP 400: record refused by the test receiver/,
  );
});
