// Grouped alerts through the real binary and a real HTTPS receiver: a flood of one group is its first record at
// once plus one summary per window, counts adding up; two groups stay apart; the slack format says the same in
// words; kill -9 during a window loses no count (it may repeat one); `group` on a SIEM output is refused (78).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { parseExposition, sampleValue } from '../helpers/prometheus.js';
import { genericRecord } from '../helpers/records.js';
import { startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { serveRefusing } from './output-serve.js';

const A = { source_ip: '203.0.113.5', threat: 'SSH brute force' };
const B = { source_ip: '198.51.100.7', threat: 'SSH brute force' };

interface Summary {
  group: Record<string, unknown> | null;
  count: number;
  first_at: string;
  last_at: string;
  sensors: string[];
  records: { id: string; src_ip: string; threat: string }[];
}

/** What the receiver was sent, per path: plain record batches, summaries, slack texts. */
async function groupReceiver(t: { after(fn: () => unknown): void }, refuseSummaries = false) {
  const seen = {
    firsts: [] as { src_ip: string; threat: string }[],
    summaries: [] as Summary[],
    texts: [] as string[],
  };
  const receiver = await startHttpsReceiver(t, (request, body, response) => {
    const message = JSON.parse(body) as { records?: []; group?: unknown; text?: string };
    if (request.url === '/slack') seen.texts.push(message.text as string);
    else if ('group' in message) {
      seen.summaries.push(message as unknown as Summary);
      if (refuseSummaries) {
        response.writeHead(400).end('summaries not accepted');
        return;
      }
    } else seen.firsts.push(...(message.records as { src_ip: string; threat: string }[]));
    response.writeHead(200).end();
  });
  return { receiver, seen };
}

/** Records sent for a group so far: its first records plus every summary's count. */
function counted(seen: { firsts: { src_ip: string }[]; summaries: Summary[] }, ip: string): number {
  const firsts = seen.firsts.filter((r) => r.src_ip === ip).length;
  return firsts + seen.summaries.filter((s) => s.group?.src_ip === ip).reduce((n, s) => n + s.count, 0);
}

async function serveGrouped(
  t: { after(fn: () => unknown): void },
  dir: string,
  outputs: Record<string, Record<string, unknown>>,
): Promise<{
  serve: () => Promise<ServeProcess>;
  post: (serve: ServeProcess, records: object[]) => Promise<void>;
}> {
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ outputs }));
  const key = await addSensorCli(dir, 'fw');
  let agent: ReturnType<typeof trustingAgent> | null = null;
  return {
    async serve() {
      const serve = await spawnServe(dir, ['--config', config]);
      t.after(() => serve.stop('SIGKILL'));
      return serve;
    },
    async post(serve, records) {
      // Made once serve has written its certificate.
      if (agent === null) {
        const made = trustingAgent(dir);
        t.after(() => made.close());
        agent = made;
      }
      const reply = await post(serve.url, '/generic', records, { agent, sensor: 'fw', key });
      assert.equal(reply.status, 200);
    },
  };
}

/** A header's RFC 2047 encoded words (=?UTF-8?Q?...?=) as text. */
const decodeWords = (value: string) =>
  value.replace(/=\?UTF-8\?Q\?([^?]*)\?=\s*/gi, (_, q: string) =>
    Buffer.from(
      q
        .replace(/_/g, ' ')
        .replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      'latin1',
    ).toString('utf8'),
  );

const times = (n: number, record: Record<string, unknown>) =>
  Array.from({ length: n }, () => genericRecord(record));

test('a flood of one group: its first record at once, then one summary per window; two groups apart', async (t) => {
  const dir = makeTempDir(t);
  const { receiver, seen } = await groupReceiver(t);
  writeFileSync(join(dir, 'ca.pem'), receiver.ca);
  const group = { by: ['src_ip', 'threat'], window: '2s' };
  const common = { type: 'webhook', ca: join(dir, 'ca.pem'), group, batch: { maxWaitMs: 100 } };
  const run = await serveGrouped(t, dir, {
    hook: { ...common, url: `${receiver.url}/json` },
    chat: { ...common, url: `${receiver.url}/slack`, format: 'slack' },
  });
  const serve = await run.serve();
  const started = Date.now();
  // 300 of A in six bursts over about 3 s (past one window), 20 of B among them.
  for (let burst = 0; burst < 6; burst += 1) {
    await run.post(serve, [...times(50, A), ...(burst < 2 ? times(10, B) : [])]);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await until(
    () => counted(seen, A.source_ip) >= 300 && counted(seen, B.source_ip) >= 20,
    60_000,
    'every count',
  );
  const elapsedWindows = Math.ceil((Date.now() - started) / 2000) + 1;
  assert.equal(counted(seen, A.source_ip), 300, 'no record counted twice');
  assert.equal(counted(seen, B.source_ip), 20);
  const firstsA = seen.firsts.filter((r) => r.src_ip === A.source_ip).length;
  const summariesA = seen.summaries.filter((s) => s.group?.src_ip === A.source_ip);
  t.diagnostic(`A: ${firstsA} first(s), summaries ${summariesA.map((s) => s.count).join(' + ')}`);
  assert.equal(firstsA, 1, 'one first message for a flood without a quiet window');
  assert.ok(summariesA.length >= 1 && summariesA.length <= elapsedWindows, 'one summary per window at most');
  for (const s of seen.summaries) {
    assert.deepEqual(Object.keys(s.group ?? {}).sort(), ['src_ip', 'threat']);
    assert.ok(s.count > 0 && s.first_at <= s.last_at);
    assert.deepEqual(s.sensors, ['fw']);
    assert.ok(s.records.length > 0 && s.records.length <= 5, 'a few samples');
    assert.ok(
      s.records.every((r) => r.src_ip === s.group?.src_ip),
      'groups stay apart',
    );
  }
  // The slack output says the same in words.
  await until(
    () => seen.texts.some((text) => text.includes('198.51.100.7 — SSH brute force ×')),
    30_000,
    'slack',
  );
  assert.match(seen.texts.join('\n'), /203\.0\.113\.5 — SSH brute force ×\d+ on 1 sensor in 2 s/);
});

test('kill -9 during a window loses no count: the open groups come back with the position', async (t) => {
  const dir = makeTempDir(t);
  const { seen, run } = await groupedWebhook(t, dir, { by: ['src_ip', 'threat'], window: '6s' });
  let serve = await run.serve();
  await run.post(serve, times(100, A));
  await until(() => seen.firsts.length > 0, 30_000, 'the first message');
  // The output passed all 100 records: their count is in the open window, written with the position, not yet
  // sent. Then the kill.
  const state = join(dir, 'outputs', 'hook.groups.json');
  await until(
    () => existsSync(state) && readFileSync(state, 'utf8').includes('"count":99'),
    30_000,
    'the open group written',
  );
  assert.equal(seen.summaries.length, 0, 'the kill lands inside the window');
  await serve.stop('SIGKILL');
  serve = await run.serve();
  await run.post(serve, times(50, A));
  await until(() => counted(seen, A.source_ip) >= 150, 60_000, 'every count after the restart');
  // Nothing was sent twice either: the kill fell after the count was written and before any summary left, and
  // the batch handed over again after the restart is recognised by its ids.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.diagnostic(`firsts ${seen.firsts.length}, summaries ${seen.summaries.map((s) => s.count).join(' + ')}`);
  assert.equal(counted(seen, A.source_ip), 150);
});

test('past maxGroups, records of new groups are counted in one overflow group, and in the metric', async (t) => {
  const dir = makeTempDir(t);
  const { seen, run } = await groupedWebhook(t, dir, { by: ['src_ip'], window: '1s', maxGroups: 2 });
  const serve = await run.serve();
  const ips = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5'];
  await run.post(
    serve,
    ips.flatMap((ip) => times(10, { ...A, source_ip: ip })),
  );
  const total = () => seen.firsts.length + seen.summaries.reduce((n, s) => n + s.count, 0);
  await until(() => total() >= 50, 30_000, 'every count');
  assert.equal(total(), 50);
  assert.equal(seen.firsts.length, 3, 'two groups and the overflow group, each a first record');
  const overflow = seen.summaries.filter((s) => s.group === null);
  assert.equal(
    overflow.reduce((n, s) => n + s.count, 0),
    29,
    'the records of the groups past the cap, but the first, in the overflow summary',
  );
  const metrics = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
  assert.equal(sampleValue(metrics, 'threatcol_output_group_overflow_total', { output: 'hook' }), 30);
  assert.ok(
    serve.logs.some((l) => String(l.msg).includes('past group.maxGroups')),
    'said in the log',
  );
});

test('a summary refused for good (400) is never silent: its count in the log, the last error and a metric, even with no samples to dead-letter', async (t) => {
  const dir = makeTempDir(t);
  const { seen, run } = await groupedWebhook(t, dir, { by: ['src_ip'], window: '1s', samples: 0 }, true);
  const serve = await run.serve();
  await run.post(serve, times(100, A));
  await until(() => seen.summaries.length > 0, 30_000, 'the summary sent');
  const refused = () =>
    serve.logs.filter((l) => l.msg === 'receiver refused group summaries; their samples dead-lettered');
  await until(() => refused().length > 0, 30_000, 'the refusal logged');
  assert.equal(seen.firsts.length, 1);
  assert.equal(seen.summaries[0]?.count, 99);
  assert.deepEqual(
    { records: refused()[0]?.records, samples: refused()[0]?.samples, answer: refused()[0]?.answer },
    { records: 99, samples: 0, answer: 'HTTP 400: summaries not accepted' },
  );
  const metrics = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
  assert.equal(sampleValue(metrics, 'threatcol_output_group_refused_records_total', { output: 'hook' }), 99);
  assert.equal(sampleValue(metrics, 'threatcol_output_dead_letters_total', { output: 'hook' }), 0);
  const { outputs } = (await (await fetch(`${serve.adminUrl}/api/outputs`)).json()) as {
    outputs: { name: string; lastError: string | null }[];
  };
  assert.match(
    outputs.find((o) => o.name === 'hook')?.lastError ?? '',
    /1 group summaries of 99 records refused/,
  );
});

test('email: the first record in a digest, then the window in one mail saying the count in words', async (t) => {
  const dir = makeTempDir(t);
  const smtp = await startSmtpReceiver(t, { implicitTls: false, user: 'alerts', password: 'mail-password' });
  writeFileSync(join(dir, 'smtp.password'), 'mail-password\n');
  writeFileSync(join(dir, 'smtp-ca.pem'), smtp.ca);
  const run = await serveGrouped(t, dir, {
    mail: {
      type: 'email',
      host: '127.0.0.1',
      port: smtp.port,
      ca: join(dir, 'smtp-ca.pem'),
      username: 'alerts',
      passwordFile: join(dir, 'smtp.password'),
      from: 'threatcol@collector.test',
      to: ['oncall@example.test'],
      minIntervalMs: 1000,
      group: { by: ['src_ip', 'threat'], window: '2s' },
      batch: { maxWaitMs: 100 },
    },
  });
  const serve = await run.serve();
  await run.post(serve, times(100, A));
  const subjects = () => smtp.mails.map((m) => decodeWords(m.headers.get('subject') ?? ''));
  await until(() => subjects().some((s) => s.includes('×')), 30_000, 'the summary mail').catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify(subjects())} ${JSON.stringify(serve.logs.slice(-5))}`);
  });
  const summary = smtp.mails[1];
  assert.match(subjects()[0] ?? '', /1 threat:/, 'the first record at once, in a digest of its own');
  assert.match(subjects()[1] ?? '', /203\.0\.113\.5 — SSH brute force ×99 on 1 sensor in 2 s/);
  assert.match(summary?.text ?? '', /sensors fw\n.*203\.0\.113\.5 -> /);
});

test('a window longer than a timer can wait (1000h, 2000h): the output keeps running and waits quietly', async (t) => {
  const dir = makeTempDir(t);
  const firsts: Record<string, string[]> = { '/long': [], '/longer': [] };
  const receiver = await startHttpsReceiver(t, (request, body, response) => {
    const message = JSON.parse(body) as { records?: { src_ip: string }[] };
    for (const r of message.records ?? []) firsts[request.url as string]?.push(r.src_ip);
    response.writeHead(200).end();
  });
  writeFileSync(join(dir, 'ca.pem'), receiver.ca);
  const hook = (path: string, window: string) => ({
    type: 'webhook',
    url: `${receiver.url}${path}`,
    ca: join(dir, 'ca.pem'),
    group: { by: ['src_ip'], window },
    batch: { maxWaitMs: 100 },
  });
  const run = await serveGrouped(t, dir, { long: hook('/long', '1000h'), longer: hook('/longer', '2000h') });
  const serve = await run.serve();
  const both = (ip: string) => Object.values(firsts).every((ips) => ips.includes(ip));
  await run.post(serve, times(3, A));
  await until(() => both(A.source_ip), 30_000, "both outputs send A's first record");
  // The outputs now wait for A's window to end, weeks away; B's first record must still go at once.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await run.post(serve, times(3, B));
  // A hang guard: what each output sent is said by the assertion below.
  await until(() => both(B.source_ip), 30_000, "both outputs send B's first record").catch(() => {});
  assert.deepEqual(firsts, { '/long': [A.source_ip, B.source_ip], '/longer': [A.source_ip, B.source_ip] });
  assert.doesNotMatch(serve.stderr(), /TimeoutOverflowWarning/, 'no timer cut to 1 ms (a busy loop)');
  assert.deepEqual(
    serve.logs.filter((l) => String(l.msg).startsWith('output ')).map((l) => `${l.output} ${l.msg}`),
    serve.logs.filter((l) => l.msg === 'output started').map((l) => `${l.output} output started`),
    'no output paused or failing',
  );
});

test('group on a SIEM output, or a window of 0, stops serve with 78, naming the key', async (t) => {
  const dir = makeTempDir(t);
  const group = { by: ['src_ip'], window: '10m' };
  assert.match(
    await serveRefusing(dir, { siem: { type: 'syslog', host: 'siem.example', group } }),
    /outputs\.siem\.group: .*webhook.*email/,
  );
  // A window of no time would be a second's, its summaries saying "in 0 min".
  const hook = { type: 'webhook', url: 'https://hooks.example/x', group: { ...group, window: '0m' } };
  assert.match(await serveRefusing(dir, { hook }), /outputs\.hook\.group\.window/);
});

/** One grouped JSON webhook output (`hook`) to a fresh receiver, trusted through its CA. */
async function groupedWebhook(
  t: { after(fn: () => unknown): void },
  dir: string,
  group: Record<string, unknown>,
  refuseSummaries = false,
) {
  const { receiver, seen } = await groupReceiver(t, refuseSummaries);
  writeFileSync(join(dir, 'ca.pem'), receiver.ca);
  const run = await serveGrouped(t, dir, {
    hook: {
      type: 'webhook',
      url: `${receiver.url}/json`,
      ca: join(dir, 'ca.pem'),
      group,
      batch: { maxWaitMs: 100 },
    },
  });
  return { seen, run };
}
