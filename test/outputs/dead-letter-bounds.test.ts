// Dead letters are bounded (docs/operations.md, "Dead letters"): listing and `--retry` read them a line at a
// time whatever their size (the CLI's peak RSS against a small file's, in the same run), `--retry` re-queues
// them in batches and survives kill -9 (what it had not sent stays listed once, and the next `--retry` picks
// it up), the size cap per output drops the oldest, and the store's retention period prunes them (both on
// the files and the NATS backend). All through the real binary on a real data directory.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  addSensorCli,
  BIN,
  cleanEnv,
  runCli,
  type ServeProcess,
  spawnServe,
  startCli,
} from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord, readStored, storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { startReceiver } from './webhook-receiver.js';

const PEAK_RSS = fileURLToPath(new URL('./peak-rss.cjs', import.meta.url));
const DAY_MS = 86_400_000;

/** Writes `count` dead letters (ids returned, oldest first) to `outputs/FILE`; threat per index. */
function writeLetters(
  dir: string,
  file: string,
  count: number,
  threat: (i: number) => string = (i) => `t${i}`,
): string[] {
  mkdirSync(join(dir, 'outputs'), { recursive: true });
  const fd = openSync(join(dir, 'outputs', file), 'a');
  const ids: string[] = [];
  try {
    for (let start = 0; start < count; start += 1000) {
      let chunk = '';
      for (let i = start; i < Math.min(count, start + 1000); i += 1) {
        const record = storedGenericRecord({ threat: threat(i) });
        ids.push(record.id as string);
        chunk += `{"at":"2026-11-27T10:00:00.000Z","answer":"HTTP 400: record refused","record":${JSON.stringify(record)}}\n`;
      }
      writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  return ids;
}

function configFile(dir: string, config: Record<string, unknown>): string {
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** The CLI with its peak RSS read at exit; stdout counted (lines, bytes) and kept only at both ends. */
async function measuredCli(args: string[]): Promise<{
  code: number | null;
  stderr: string;
  peakKib: number;
  lines: number;
  head: string;
  tail: string;
}> {
  const peakFile = join(makeTempDir(), 'peak');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cleanEnv({ NODE_OPTIONS: `--require ${PEAK_RSS}`, PEAK_RSS_FILE: peakFile }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let lines = 0;
  let head = '';
  let tail = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    for (let i = d.indexOf('\n'); i !== -1; i = d.indexOf('\n', i + 1)) lines += 1;
    if (head.length < 4096) head += d.slice(0, 4096 - head.length);
    tail = (tail + d).slice(-4096);
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, stderr, peakKib: Number(readFileSync(peakFile, 'utf8')), lines, head, tail };
}

const deadLetterFiles = (dir: string, name = 'hook') =>
  existsSync(join(dir, 'outputs'))
    ? readdirSync(join(dir, 'outputs')).filter((f) => f.startsWith(`${name}.dead-letter.`))
    : [];

async function listedIds(dir: string, config?: string): Promise<string[]> {
  const listed = await runCli([
    'outputs',
    'dead-letter',
    'hook',
    '--json',
    '--data-dir',
    dir,
    ...(config ? ['--config', config] : []),
  ]);
  assert.equal(listed.code, 0, listed.stderr);
  return (JSON.parse(listed.stdout) as { record: { id: string } }[]).map((l) => l.record.id);
}

test("listing a large dead-letter file streams it: peak RSS stays near a small file's", async (t) => {
  const small = makeTempDir(t);
  const large = makeTempDir(t);
  writeLetters(small, 'hook.dead-letter.ndjson', 100);
  const ids = writeLetters(large, 'hook.dead-letter.ndjson', 120_000);
  const bytes = statSync(join(large, 'outputs', 'hook.dead-letter.ndjson')).size;

  const base = await measuredCli(['outputs', 'dead-letter', 'hook', '--data-dir', small]);
  assert.equal(base.code, 0, base.stderr);
  const table = await measuredCli(['outputs', 'dead-letter', 'hook', '--data-dir', large]);
  const json = await measuredCli(['outputs', 'dead-letter', 'hook', '--json', '--data-dir', large]);
  const grownMib = (kib: number) => (kib - base.peakKib) / 1024;
  t.diagnostic(
    `file ${(bytes / 1048576).toFixed(0)} MiB; peak RSS: small ${(base.peakKib / 1024).toFixed(0)} MiB, ` +
      `table +${grownMib(table.peakKib).toFixed(1)} MiB, --json +${grownMib(json.peakKib).toFixed(1)} MiB`,
  );
  assert.ok(grownMib(table.peakKib) < 48, `table: +${grownMib(table.peakKib)} MiB`);
  assert.ok(grownMib(json.peakKib) < 48, `--json: +${grownMib(json.peakKib)} MiB`);

  assert.equal(table.code, 0, table.stderr);
  assert.match(table.tail, /the newest 20 of 120000 dead letters/);
  assert.ok(table.tail.includes(ids.at(-1) as string), 'the newest is shown');
  assert.ok(!table.head.includes(ids[0] as string), 'the oldest is not');
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.lines, 120_000 + 2, 'every dead letter, one a line, inside [ ]');
  assert.ok(json.tail.trimEnd().endsWith(']'), json.tail.slice(-200));
});

test('--retry of a large dead-letter file streams it in batches: peak RSS grows by less than half of what the file grew', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const run = async (count: number) => {
    const dir = makeTempDir(t);
    writeLetters(dir, 'hook.dead-letter.ndjson', count);
    const fileKib = statSync(join(dir, 'outputs', 'hook.dead-letter.ndjson')).size / 1024;
    const config = configFile(dir, { outputs: { hook: { type: 'webhook', url: receiver.url } } });
    const retried = await measuredCli([
      'outputs',
      'dead-letter',
      'hook',
      '--retry',
      '--data-dir',
      dir,
      '--config',
      config,
    ]);
    assert.equal(retried.code, 0, retried.stderr);
    assert.match(retried.head, new RegExp(`${count} of ${count} dead letters delivered`));
    assert.deepEqual(deadLetterFiles(dir), []);
    return { peakKib: retried.peakKib, fileKib };
  };
  // Against a file a quarter the size, not a tiny one: the heap of a run that allocates (parses, serializes, sends)
  // grows towards V8's sizing before it levels off, whatever it keeps (100 letters 80 MiB, 10,000 103, 30,000 119,
  // 120,000 133: a file four times larger, 46 MiB more of it, cost 14 MiB). A retry holding the file, or its
  // letters, grows by more than the file itself.
  const base = await run(30_000);
  const large = await run(120_000);
  const grown = (large.peakKib - base.peakKib) / 1024;
  const fileGrown = (large.fileKib - base.fileKib) / 1024;
  t.diagnostic(
    `peak RSS: 30000 letters ${(base.peakKib / 1024).toFixed(0)} MiB, 120000 letters +${grown.toFixed(1)} MiB for ${fileGrown.toFixed(0)} MiB more file`,
  );
  assert.ok(grown < fileGrown / 2, `+${grown.toFixed(1)} MiB for ${fileGrown.toFixed(1)} MiB more file`);
  assert.equal(receiver.accepted.size, 150_000);
  const sizes = receiver.bodies.map((b) => (JSON.parse(b.body) as { records: unknown[] }).records.length);
  assert.ok(Math.max(...sizes) <= 500, 'batches of batch.maxRecords');
});

test('--retry sends in batches; killed -9 midway, nothing is lost or listed twice, and the next --retry finishes', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver({ refuse: (threat) => threat.startsWith('poison') });
  t.after(() => receiver.close());
  // The last two batches are refused again (a webhook refuses a whole batch): they stay, each once.
  const ids = writeLetters(dir, 'hook.dead-letter.ndjson', 2000, (i) => (i >= 1900 ? `poison${i}` : `t${i}`));
  const poison = ids.slice(1900);
  const config = configFile(dir, {
    outputs: { hook: { type: 'webhook', url: receiver.url, batch: { maxRecords: 50 } } },
  });
  const args = ['outputs', 'dead-letter', 'hook', '--data-dir', dir, '--config', config];

  receiver.delayMs = 40;
  const first = startCli([...args, '--retry']);
  t.after(() => first.child.kill('SIGKILL'));
  let exited = false;
  void first.result.then(() => (exited = true));
  await until(() => receiver.bodies.length >= 8 || exited, 60_000, 'eight batches sent');
  first.child.kill('SIGKILL');
  assert.equal((await first.result).signal, 'SIGKILL', 'killed in the middle of the retry');
  const sizes = receiver.bodies.map((b) => (JSON.parse(b.body) as { records: unknown[] }).records.length);
  assert.ok(
    sizes.every((n) => n <= 50),
    `batches of at most batch.maxRecords: ${sizes.join(',')}`,
  );

  const listed = await listedIds(dir, config);
  assert.equal(new Set(listed).size, listed.length, 'nothing listed twice');
  const lost = ids.filter((id) => !listed.includes(id) && !receiver.accepted.has(id));
  assert.deepEqual(lost, [], 'every dead letter is delivered or still listed');
  assert.ok(listed.length >= 2000 - receiver.accepted.size, 'what was not delivered is listed');
  const table = await runCli(args);
  assert.match(table.stdout, /interrupted --retry/, table.stdout);

  receiver.delayMs = 0;
  const second = await runCli([...args, '--retry']);
  assert.equal(second.code, 69, second.stderr);
  assert.match(second.stderr, /OUTPUT_FAILED/);
  assert.deepEqual((await listedIds(dir, config)).sort(), [...poison].sort(), 'the refused ones, each once');
  for (const id of ids.slice(0, 1900)) assert.ok(receiver.accepted.has(id), `${id} delivered`);
  assert.deepEqual(
    deadLetterFiles(dir).filter((f) => f.includes('retrying')),
    [],
    'no file is left set aside',
  );
});

test('--retry sends a dead letter the daemon appends to the file it has just claimed (opened before the claim)', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const ids = writeLetters(dir, 'hook.dead-letter.ndjson', 10);
  const config = configFile(dir, { outputs: { hook: { type: 'webhook', url: receiver.url } } });
  const args = ['outputs', 'dead-letter', 'hook', '--data-dir', dir, '--config', config];
  // The daemon's append has opened the file when the retry renames it; its write lands after the retry read it.
  const daemonFd = openSync(join(dir, 'outputs', 'hook.dead-letter.ndjson'), 'a');
  receiver.delayMs = 300;
  const retry = startCli([...args, '--retry']);
  t.after(() => retry.child.kill('SIGKILL'));
  await until(() => receiver.bodies.length >= 1, 60_000, 'the first batch sent');
  const late = storedGenericRecord({ threat: 'appended to the claimed file' });
  writeSync(
    daemonFd,
    `{"at":"2026-11-27T10:00:00.000Z","answer":"HTTP 503","record":${JSON.stringify(late)}}\n`,
  );
  closeSync(daemonFd);
  const result = await retry.result;
  assert.equal(result.code, 0, result.stderr);
  const listed = await listedIds(dir, config);
  for (const id of [...ids, late.id as string]) {
    assert.ok(receiver.accepted.has(id) || listed.includes(id), `${id} neither delivered nor listed`);
  }
});

test('a .retrying-PID file left by a dead --retry is listed and sent by the next --retry', async (t) => {
  const dir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  // A pid no process has now.
  let pid = 4_000_000;
  while (existsSync(`/proc/${pid}`)) pid -= 1;
  const left = writeLetters(dir, `hook.dead-letter.ndjson.retrying-${pid}`, 30);
  const fresh = writeLetters(dir, 'hook.dead-letter.ndjson', 5);
  const config = configFile(dir, { outputs: { hook: { type: 'webhook', url: receiver.url } } });
  const args = ['outputs', 'dead-letter', 'hook', '--data-dir', dir, '--config', config];

  assert.deepEqual(await listedIds(dir, config), [...left, ...fresh], 'not hidden: listed, oldest first');
  const table = await runCli(args);
  assert.match(table.stdout, /35 dead letters/);
  assert.match(table.stdout, /30 of them .*interrupted --retry/);

  const retried = await runCli([...args, '--retry']);
  assert.equal(retried.code, 0, retried.stderr);
  assert.match(retried.stdout, /35 of 35 dead letters delivered/);
  for (const id of [...left, ...fresh]) assert.equal(receiver.accepted.get(id), 1, id);
  assert.deepEqual(deadLetterFiles(dir), []);
  assert.match((await runCli(args)).stdout, /No dead letters for output hook/);
});

async function serveRefusing(
  t: { after(fn: () => unknown): void },
  dir: string,
  config: Record<string, unknown>,
): Promise<{ serve: ServeProcess; configPath: string; postAll(n: number): Promise<void> }> {
  const configPath = configFile(dir, config);
  const key = await addSensorCli(dir, 'fw', ['--config', configPath]);
  const serve = await spawnServe(dir, ['--config', configPath]);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  return {
    serve,
    configPath,
    async postAll(n) {
      for (let i = 0; i < n; i += 100) {
        const body = Array.from({ length: Math.min(100, n - i) }, (_, j) =>
          genericRecord({ threat: `r${i + j}` }),
        );
        const reply = await post(serve.url, '/generic', body, { agent, sensor: 'fw', key });
        assert.equal(reply.status, 200);
      }
    },
  };
}

for (const backend of ['files', 'nats'] as const) {
  test(`deadLetterMaxBytes bounds an output's dead letters on disk, dropping the oldest (${backend})`, async (t) => {
    const dir = makeTempDir(t);
    const receiver = await startReceiver({ refuse: () => true });
    t.after(() => receiver.close());
    const store =
      backend === 'nats'
        ? { store: { backend: 'nats' }, nats: { servers: [(await startNatsServer(t)).url] } }
        : {};
    const maxBytes = 65_536;
    const { serve, configPath, postAll } = await serveRefusing(t, dir, {
      ...store,
      outputs: {
        hook: {
          type: 'webhook',
          url: receiver.url,
          batch: { maxRecords: 20, maxWaitMs: 20 },
          startAt: 'oldest',
          deadLetterMaxBytes: maxBytes,
        },
      },
    });
    await postAll(600);
    const written = () =>
      serve.logs
        .filter((l) => l.msg === 'receiver refused records; dead-lettered')
        .reduce((sum, l) => sum + (l.records as number), 0);
    await until(() => written() === 600, 60_000, 'every record dead-lettered');

    const onDisk = deadLetterFiles(dir).reduce((sum, f) => sum + statSync(join(dir, 'outputs', f)).size, 0);
    assert.ok(onDisk <= maxBytes, `${onDisk} bytes on disk`);
    const listed = await listedIds(dir, configPath);
    const dropped = serve.logs
      .filter((l) => typeof l.msg === 'string' && l.msg.includes('oldest dropped'))
      .reduce((sum, l) => sum + (l.records as number), 0);
    t.diagnostic(`${listed.length} kept in ${onDisk} bytes, ${dropped} dropped`);
    assert.ok(listed.length > 0 && listed.length < 600);
    assert.equal(dropped, 600 - listed.length, 'every dropped one counted in the log');
    const threats = (
      await runCli(['outputs', 'dead-letter', 'hook', '--json', '--data-dir', dir, '--config', configPath])
    ).stdout;
    const kept = (JSON.parse(threats) as { record: { threat: string } }[]).map((l) => l.record.threat);
    assert.deepEqual(
      kept,
      Array.from({ length: listed.length }, (_, i) => `r${600 - listed.length + i}`),
      'the newest are kept, in order',
    );
    if (backend === 'files') assert.equal(readStored(dir).length, 600);
  });
}

for (const backend of ['files', 'nats'] as const) {
  test(`the store retention period prunes dead letters (store.retention.days), a removed output's too (${backend})`, async (t) => {
    const dir = makeTempDir(t);
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const old = (Date.now() - 10 * DAY_MS) / 1000;
    const age = (file: string) => utimesSync(join(dir, 'outputs', file), old, old);
    writeLetters(dir, 'hook.dead-letter.1-1.ndjson', 10);
    age('hook.dead-letter.1-1.ndjson');
    const keptPart = writeLetters(dir, 'hook.dead-letter.2-1.ndjson', 4);
    writeLetters(dir, 'hook.dead-letter.ndjson', 6);
    age('hook.dead-letter.ndjson');
    writeLetters(dir, 'gone.dead-letter.ndjson.retrying-1', 3);
    age('gone.dead-letter.ndjson.retrying-1');
    writeLetters(dir, 'gone.dead-letter.ndjson', 3);
    age('gone.dead-letter.ndjson');
    const config = configFile(dir, {
      store: { retention: { days: 3 }, ...(backend === 'nats' ? { backend: 'nats' } : {}) },
      ...(backend === 'nats' ? { nats: { servers: [(await startNatsServer(t)).url] } } : {}),
      outputs: { hook: { type: 'webhook', url: receiver.url } },
    });

    const first = await spawnServe(dir, ['--config', config]);
    t.after(() => first.stop('SIGKILL'));
    await until(
      () => !existsSync(join(dir, 'outputs', 'hook.dead-letter.1-1.ndjson')),
      OUTPUTS_THREAD_MS,
      'old part pruned',
    );
    await first.stop();
    // The file being appended to is set aside first, and deleted by the next run (never under a writer).
    const second = await spawnServe(dir, ['--config', config]);
    t.after(() => second.stop('SIGKILL'));
    await until(
      () => deadLetterFiles(dir, 'gone').length === 0,
      OUTPUTS_THREAD_MS,
      "the removed output's pruned",
    );
    await until(() => deadLetterFiles(dir).length === 1, OUTPUTS_THREAD_MS, 'only the recent part left');
    await second.stop();
    assert.deepEqual(await listedIds(dir, config), keptPart);
    const pruned = [...first.logs, ...second.logs].filter(
      (l) => l.msg === 'removed dead letters past store.retention.days',
    );
    assert.equal(
      pruned.reduce((sum, l) => sum + (l.records as number), 0),
      10 + 6 + 3 + 3,
      JSON.stringify(pruned),
    );
  });
}
