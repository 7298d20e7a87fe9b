// End-to-end through the real binary: live registry changes, SIGTERM, SIGHUP, kill -9 with a torn line, privilege.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, chownSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, BIN, cleanEnv, runCli, spawnServe } from '../helpers/cli.js';
import { errorCode, post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored, readStoreText } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries until `check` is true; returns the elapsed milliseconds, or fails after `limitMs`. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < limitMs) {
    if (await check()) return Date.now() - start;
    await sleep(25);
  }
  assert.fail(`not within ${limitMs} ms`);
}

test('a running daemon accepts a sensor added later and refuses it once revoked, within 1 s, no restart', async (t) => {
  const dir = makeTempDir(t);
  await addSensorCli(dir, 'first');
  const serve = await spawnServe(dir);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const key = await addSensorCli(dir, 'late');
  const as = { agent, sensor: 'late', key };
  const added = await within(
    1000,
    async () => (await post(serve.url, '/generic', genericRecord(), as)).status === 200,
  );
  const revoke = await runCli(['sensor', 'revoke', 'late', '--data-dir', dir]);
  assert.equal(revoke.code, 0);
  const revoked = await within(
    1000,
    async () => (await post(serve.url, '/generic', genericRecord(), as)).status === 403,
  );
  t.diagnostic(`picked up an addition in ${added} ms and a revocation in ${revoked} ms`);
  const final = await post(serve.url, '/generic', genericRecord(), as);
  assert.equal(errorCode(final), 'SENSOR_REVOKED');
});

test('SIGTERM: in-flight requests finish, every 200 is stored, exit 0 within 10 s', async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'term');
  const serve = await spawnServe(dir);
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const sends = Array.from({ length: 200 }, (_, i) =>
    post(serve.url, '/generic', genericRecord({ threat: `t${i}` }), { agent, sensor: 'term', key }).catch(
      () => null,
    ),
  );
  await sleep(50);
  const started = Date.now();
  serve.child.kill('SIGTERM');
  const replies = await Promise.all(sends);
  const exit = await serve.exited;
  assert.equal(exit.code, 0);
  assert.ok(Date.now() - started < 10_000);
  const acked = replies.flatMap((r) => (r?.status === 200 ? (r.json as { ids: string[] }).ids : []));
  const stored = new Set(readStored(dir).map((r) => r.id));
  for (const id of acked) assert.ok(stored.has(id), `acknowledged ${id} is stored`);
  assert.ok(serve.logs.some((l) => l.msg === 'stopped'));
});

test('SIGHUP reloads without dropping an open keep-alive connection', async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'hup');
  const serve = await spawnServe(dir);
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir, { connections: 1 });
  t.after(() => agent.close());
  const as = { agent, sensor: 'hup', key };
  assert.equal((await post(serve.url, '/generic', genericRecord(), as)).status, 200);
  serve.child.kill('SIGHUP');
  await within(2000, async () => serve.logs.some((l) => String(l.msg).startsWith('reloaded')));
  assert.equal((await post(serve.url, '/generic', genericRecord(), as)).status, 200);
  assert.equal(serve.child.exitCode, null);
});

test('kill -9 then restart: a torn last line is cut off and logged; acknowledged records survive', async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'crash');
  const first = await spawnServe(dir);
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const as = { agent, sensor: 'crash', key };
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await post(first.url, '/generic', genericRecord({ threat: `c${i}` }), as);
    assert.equal(r.status, 200);
    ids.push((r.json as { ids: string[] }).ids[0] as string);
  }
  await first.stop('SIGKILL');
  // What a crash in the middle of a write leaves behind.
  const segment = readdirSync(join(dir, 'threats')).sort().at(-1) as string;
  appendFileSync(join(dir, 'threats', segment), '{"id":"torn","received_at":"2026-');
  const second = await spawnServe(dir);
  t.after(() => second.stop('SIGKILL'));
  const cut = second.logs.find((l) => l.msg === 'cut off a torn last line left by an unclean stop');
  assert.ok(cut, 'the repair is logged');
  assert.equal(cut.removedBytes, 33);
  assert.ok(readStoreText(dir).endsWith('\n'));
  const afterAgent = trustingAgent(dir);
  t.after(() => afterAgent.close());
  assert.equal(
    (await post(second.url, '/generic', genericRecord({ threat: 'after' }), { ...as, agent: afterAgent }))
      .status,
    200,
  );
  const stored = readStored(dir);
  assert.deepEqual(
    stored.map((r) => r.threat),
    ['c0', 'c1', 'c2', 'c3', 'c4', 'after'],
  );
  assert.deepEqual(
    stored.slice(0, 5).map((r) => r.id),
    ids,
  );
});

test("a power cut's hole (NUL bytes before data that reached the disk) is cut off at restart with all after it", async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'cut');
  const first = await spawnServe(dir);
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  const as = { agent, sensor: 'cut', key };
  for (let i = 0; i < 3; i++) {
    assert.equal((await post(first.url, '/generic', genericRecord({ threat: `c${i}` }), as)).status, 200);
  }
  await first.stop('SIGKILL');
  // Two batches written after the last fdatasync: the first never reached the disk (zeros), the second's
  // end did (a complete line after the hole), as when pages are written back out of order at a power cut.
  const segment = join(dir, 'threats', readdirSync(join(dir, 'threats')).sort().at(-1) as string);
  const kept = readFileSync(segment).length;
  const line = readFileSync(segment, 'utf8').split('\n')[0] as string;
  appendFileSync(segment, `${'\0'.repeat(4096)}"threat":"half"}\n${line.replace('"c0"', '"whole"')}\n`);
  const second = await spawnServe(dir);
  t.after(() => second.stop('SIGKILL'));
  const cut = second.logs.find((l) => l.msg === 'cut off a torn last line left by an unclean stop');
  assert.ok(cut, 'the repair is logged');
  assert.equal(cut.holeAt, kept);
  assert.equal(cut.keptBytes, kept);
  assert.equal(readFileSync(segment).length, kept);
  const afterAgent = trustingAgent(dir);
  t.after(() => afterAgent.close());
  const after = await post(second.url, '/generic', genericRecord({ threat: 'after' }), {
    ...as,
    agent: afterAgent,
  });
  assert.equal(after.status, 200);
  assert.deepEqual(
    readStored(dir).map((r) => r.threat),
    ['c0', 'c1', 'c2', 'after'],
  );
});

test('the key appears in no log line and no file of the data directory', async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'secret');
  const serve = await spawnServe(dir, ['--log-level', 'trace']);
  const agent = trustingAgent(dir);
  t.after(() => agent.close());
  await post(serve.url, '/generic', genericRecord(), { agent, sensor: 'secret', key });
  await post(serve.url, '/generic', {}, { agent, sensor: 'secret', key });
  await post(serve.url, '/generic', genericRecord(), { agent, sensor: 'secret', key: `${key}x` });
  await serve.stop();
  const logs = JSON.stringify(serve.logs) + serve.stderr();
  assert.ok(!logs.includes(key.slice(4)));
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)],
    );
  for (const file of walk(dir)) assert.ok(!readFileSync(file, 'latin1').includes(key.slice(4)), file);
});

test('a bad configuration exits 78 with every problem listed', async (t) => {
  const dir = makeTempDir(t);
  // Values from a file are configuration (78); the same mistakes in flags are usage errors (64, cli-habits).
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ server: { port: 99999 }, log: { level: 'loud' } }));
  const r = await runCli(['serve', '--data-dir', dir, '--config', config]);
  assert.equal(r.code, 78);
  assert.match(r.stderr, /CONFIG_INVALID/);
  assert.match(r.stderr, /server\.port/);
  assert.match(r.stderr, /log\.level/);
});

test('binding port 443 without privilege fails with exit 69 and names the fixes', async (t) => {
  const dir = makeTempDir(t);
  if (process.getuid?.() !== 0) {
    t.skip('needs root to switch to an unprivileged user');
    return;
  }
  chownSync(dir, 65534, 65534);
  const child = spawn(
    'setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      BIN,
      'serve',
      '--data-dir',
      dir,
      '--host',
      '127.0.0.1',
      '--port',
      '443',
      '--admin-listen',
      '127.0.0.1:0',
    ],
    {
      env: cleanEnv(),
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 69, stderr);
  assert.match(stderr, /LISTEN_FAILED/);
  assert.match(stderr, /--port/);
  assert.match(stderr, /CAP_NET_BIND_SERVICE/);
  assert.equal(statSync(join(dir, 'tls', 'key.pem')).uid, 65534);
});
