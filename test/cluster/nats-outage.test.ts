// A collector on the NATS backend whose NATS is down: serve still starts and answers 503 (never a 401 that
// would tell a firewall its key is wrong, never a 200), recovers by itself when NATS comes up; the CLI and
// `check` name the unreachable server; the NATS credentials appear in no log and no output.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addSensorCli, runCli, type ServeProcess, spawnServe, spawnTail } from '../helpers/cli.js';
import { errorCode, post, trustingAgent } from '../helpers/client.js';
import { createNatsServer, startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { waitForLog } from './support.js';

const PASSWORD = 'nats-Secret-5f3a9c1e';
const TOKEN = 'tok-Secret-0b7d2e44';

test('NATS down at start: serve starts, answers 503 + Retry-After, recovers by itself; check and the CLI name the server; credentials never shown', async (t) => {
  const node = await createNatsServer(t, ['--user', 'threatcol', '--pass', PASSWORD]);
  const server = `127.0.0.1:${node.port}`;
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    // Credentials in the URL (the easiest to leak: server lists are logged) and a token that is not used
    // by this server but must not be printed either.
    THREATCOL_NATS_SERVERS: `nats://threatcol:${PASSWORD}@${server}`,
    THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '1500',
  };
  const outputs: string[] = [];
  const cli = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const r = await runCli(args, { env: { ...env, ...extraEnv } });
    outputs.push(r.stdout, r.stderr);
    return r;
  };

  // The CLI: a change cannot be made, and says which server it could not reach.
  const cliDir = makeTempDir(t);
  const refused = await cli(['sensor', 'add', 'fw', '--data-dir', cliDir]);
  assert.equal(refused.code, 69, refused.stderr);
  assert.match(refused.stderr, /UNAVAILABLE/);
  assert.ok(refused.stderr.includes(server), refused.stderr);
  const down = await cli(['check', '--no-daemon', '--json', '--data-dir', cliDir]);
  assert.notEqual(down.code, 0);
  const storeCheck = (
    JSON.parse(down.stdout) as { checks: { name: string; status: string; message: string }[] }
  ).checks.find((c) => c.name === 'store');
  assert.equal(storeCheck?.status, 'fail', down.stdout);
  assert.ok(storeCheck?.message.includes(server), storeCheck?.message);

  // serve starts anyway and answers 503 with Retry-After: the registry is in NATS, so no key can be checked.
  const dir = makeTempDir(t);
  const serve: ServeProcess = await spawnServe(dir, [], { env, timeoutMs: 30_000 });
  t.after(() => serve.stop());
  const agent = trustingAgent(dir);
  const send = (key: string) => post(serve.url, '/generic', genericRecord(), { agent, sensor: 'fw', key });
  const early = await send('tck_not-known-yet-but-maybe-valid-aaaaaaaaaaaaa');
  assert.equal(early.status, 503, early.text);
  assert.equal(errorCode(early), 'UNAVAILABLE');
  assert.equal(early.headers['retry-after'], '1');
  const warned = await waitForLog(
    serve,
    (l) => l.msg === 'NATS is unreachable: requests get 503 until it is back; retrying',
  );
  assert.ok(JSON.stringify(warned).includes(server));
  // A balancer's health check keeps traffic away meanwhile.
  const ready = await fetch(`${serve.adminUrl}/readyz`);
  const readyText = await ready.text();
  assert.equal(ready.status, 503, readyText);
  assert.match(readyText, /sensor registry has not been read yet/);
  assert.ok(readyText.includes(server), readyText);

  // NATS comes up: a key issued now is accepted without restarting the collector.
  await node.start();
  const added = await cli(['sensor', 'add', 'fw', '--json', '--data-dir', cliDir]);
  assert.equal(added.code, 0, added.stderr);
  const key = (JSON.parse(added.stdout) as { key: string }).key;
  const started = Date.now();
  for (;;) {
    const reply = await send(key);
    if (reply.status === 200) break;
    assert.equal(reply.status, 503, reply.text);
    assert.ok(Date.now() - started < 60_000, 'recovered (a hang guard, not a speed goal)');
    await new Promise((r) => setTimeout(r, 100));
  }
  t.diagnostic(`first 200 ${Date.now() - started} ms after the key was added`);
  const wrong = await send('tck_wrong-key-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
  assert.equal(wrong.status, 401, 'a wrong key is 401 again once the registry is loaded');
  const up = await cli(['check', '--no-daemon', '--json', '--data-dir', cliDir]);
  assert.equal(
    (JSON.parse(up.stdout) as { checks: { name: string; status: string }[] }).checks.find(
      (c) => c.name === 'store',
    )?.status,
    'ok',
    up.stdout,
  );

  // A wrong password: the reason is named, the password is not.
  const badAuth = await cli(['sensor', 'list', '--data-dir', cliDir], {
    THREATCOL_NATS_SERVERS: `nats://threatcol:wrong-${PASSWORD}@${server}`,
  });
  assert.equal(badAuth.code, 69, badAuth.stderr);
  assert.match(badAuth.stderr, /authoriz|authentic/i);
  const withToken = await cli(['sensor', 'list', '--data-dir', cliDir], {
    THREATCOL_NATS_SERVERS: `nats://${server}`,
    THREATCOL_NATS_TOKEN: TOKEN,
  });
  assert.equal(withToken.code, 69, withToken.stderr);

  await serve.stop();
  const everything = [...outputs, serve.stderr(), JSON.stringify(serve.logs)].join('\n');
  assert.ok(!everything.includes(PASSWORD), 'the NATS password is never printed or logged');
  assert.ok(!everything.includes(TOKEN), 'the NATS token is never printed or logged');
});

test('threats tail keeps following the stream across a NATS restart (kill -9)', async (t) => {
  const node = await startNatsServer(t);
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_SERVERS: node.url,
    THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '2000',
  };
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'fw', [], env);
  const serve = await spawnServe(dir, [], { env, timeoutMs: 30_000 });
  t.after(() => serve.stop());
  const agent = trustingAgent(dir);
  const send = (threat: string) =>
    post(serve.url, '/generic', genericRecord({ threat }), { agent, sensor: 'fw', key });
  assert.equal((await send('before the restart')).status, 200);
  const tail = spawnTail(t, ['--json', '-n', '5', '--data-dir', dir], env);
  await tail.waitFor(1, 15_000);

  await node.kill();
  await node.start();
  const started = Date.now();
  while ((await send('after the restart')).status !== 200) {
    assert.ok(Date.now() - started < 60_000, 'stores again (a hang guard, not a speed goal)');
    await new Promise((r) => setTimeout(r, 100));
  }
  const lines = await tail.waitFor(2, 20_000);
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { threat: string }).threat),
    ['before the restart', 'after the restart'],
  );
  tail.child.kill('SIGINT');
  assert.equal((await tail.exited).code, 0, tail.stderr());
});

test('serve stops within systemd stop timeout when NATS has gone away, even with counts not yet written', async (t) => {
  const node = await startNatsServer(t);
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_SERVERS: node.url,
    // A cluster's recommended timeout: a stop must not wait it out once per unwritten counter.
    THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000',
    THREATCOL_STORE_STATS_INTERVAL_MS: '1000',
  };
  const dir = makeTempDir(t);
  const keys = await Promise.all(['fw1', 'fw2', 'fw3'].map((name) => addSensorCli(dir, name, [], env)));
  const serve = await spawnServe(dir, [], { env, timeoutMs: 30_000 });
  t.after(() => serve.stop('SIGKILL'));
  const agent = trustingAgent(dir);
  await node.kill();
  // Counts for three sensors that can no longer be written (the requests themselves get 503 or 401s).
  for (const [i, key] of keys.entries()) {
    await post(serve.url, '/generic', genericRecord(), { agent, sensor: `fw${i + 1}`, key });
    await post(serve.url, '/generic', genericRecord(), { agent, sensor: `fw${i + 1}`, key: 'tck_wrong' });
  }
  // Periodic flushes pile up against the outage for a while.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  const started = Date.now();
  const exited = await serve.stop('SIGTERM');
  const ms = Date.now() - started;
  t.diagnostic(`stopped ${ms} ms after SIGTERM`);
  assert.equal(exited.code, 0);
  // The behaviour: it does not wait out each flush's publish timeout (72 s in all before): a bound far from that.
  assert.ok(ms < 30_000, `stopping took ${ms} ms`);
  assert.ok(
    serve.logs.some((l) => l.msg === 'cannot write stats'),
    'the counts that could not be written are reported',
  );
});
