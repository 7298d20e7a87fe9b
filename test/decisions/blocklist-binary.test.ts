// Blocklists through the real binary: `threatcol serve` with rules, `sensor add` and `feed add` by the CLI,
// records posted over real TLS, the feed fetched with curl over real TLS; kill -9 between the 200 and the
// block loses nothing and a restart does not prolong a block; a bad blocklist key exits 78 at start and a
// SIGHUP with one keeps the running rules. Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import { request } from 'undici';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);
/** Hang guard for a block to reach a feed (the goal, 1 s, is reported). */
const GUARD_MS = 15_000;

const BLOCKLIST = {
  rules: {
    critical: { minCriticality: 4, duration: '24h' },
    spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
  },
  allow: ['203.0.113.0/24'],
};

function writeConfig(dir: string, blocklist: unknown): string {
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify({ blocklist, registry: { pollIntervalMs: 100 } }));
  return path;
}

async function serve(
  t: { after(fn: () => unknown): void },
  dataDir: string,
  config: string,
): Promise<ServeProcess> {
  const server = await spawnServe(dataDir, ['--config', config]);
  t.after(() => server.stop('SIGKILL'));
  return server;
}

/** The feed over real TLS with curl, trusting only the collector's self-signed certificate. */
async function curlFeed(
  dataDir: string,
  url: string,
  user: string,
  password: string,
): Promise<{ status: number; body: string }> {
  const { stdout } = await run('curl', [
    '-sS',
    '--cacert',
    join(dataDir, 'tls', 'cert.pem'),
    '--resolve',
    `localhost:${new URL(url).port}:127.0.0.1`,
    '-u',
    `${user}:${password}`,
    '-w',
    '\n%{http_code}',
    url.replace('127.0.0.1', 'localhost'),
  ]);
  const at = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
}

async function addFeed(dataDir: string, config: string, name: string, format: string) {
  const r = await runCli([
    'feed',
    'add',
    name,
    '--format',
    format,
    '--json',
    '--data-dir',
    dataDir,
    '--config',
    config,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as { name: string; url: string; username: string; password: string };
}

test('records posted by a sensor become a block in a feed fetched with curl over TLS; kill -9 loses no block and a restart prolongs none', async (t) => {
  const dataDir = makeTempDir(t);
  const config = writeConfig(dataDir, BLOCKLIST);
  let server = await serve(t, dataDir, config);
  const key = await addSensorCli(dataDir, 'fw1');
  const feed = await addFeed(dataDir, config, 'edge', 'json');
  assert.equal(feed.username, 'edge');
  const url = `${server.url}/feeds/edge`;
  const empty = await curlFeed(dataDir, url, 'edge', feed.password);
  assert.deepEqual(empty, { status: 200, body: '[]\n' });
  const wrong = await curlFeed(dataDir, url, 'edge', 'not-the-password');
  assert.equal(wrong.status, 401);

  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  await until(
    async () =>
      (await post(server.url, '/generic', [genericRecord()], { sensor: 'fw1', key, agent })).status === 200,
    GUARD_MS,
    'the sensor accepted',
  );
  const reply = await post(
    server.url,
    '/generic',
    [genericRecord({ source_ip: '198.51.100.7', criticality: 4 })],
    { sensor: 'fw1', key, agent },
  );
  assert.equal(reply.status, 200);
  let body = '';
  const ms = await until(
    async () => {
      body = (await curlFeed(dataDir, url, 'edge', feed.password)).body;
      return body.includes('198.51.100.7/32');
    },
    GUARD_MS,
    'the block in the feed',
    10,
  );
  t.diagnostic(`block in a feed (curl, real TLS) ${ms} ms after the 200`);
  const before = JSON.parse(body) as { address: string; until: string }[];

  // kill -9 right after a 200: the engine reads the record again at the next start.
  const second = await post(
    server.url,
    '/generic',
    [genericRecord({ source_ip: '198.51.100.9', criticality: 4 })],
    { sensor: 'fw1', key, agent },
  );
  assert.equal(second.status, 200);
  server.child.kill('SIGKILL');
  await server.exited;
  server = await serve(t, dataDir, config);
  const again = `${server.url}/feeds/edge`;
  await until(
    async () => {
      body = (await curlFeed(dataDir, again, 'edge', feed.password)).body;
      return body.includes('198.51.100.9/32');
    },
    GUARD_MS,
    'the block of the record acknowledged before kill -9',
  );
  const after = JSON.parse(body) as { address: string; until: string }[];
  // Not prolonged by the restart: the first block ends when it did.
  assert.equal(after.find((b) => b.address === '198.51.100.7/32')?.until, before[0]?.until);
  // The decisions' snapshot and the journal of the changes since.
  const stored = ['decisions.json', 'decisions.journal']
    .map((file) => readFileSync(join(dataDir, file), 'utf8'))
    .join('');
  assert.equal(stored.includes('sha256:'), true, 'the password is stored hashed');
  assert.doesNotMatch(stored, new RegExp(feed.password));
});

test('a malformed CIDR, duration or rule key exits 78 naming it; a SIGHUP with one keeps the running rules', async (t) => {
  const dataDir = makeTempDir(t);
  for (const [blocklist, key] of [
    [{ allow: ['203.0.113.0/33'] }, 'blocklist.allow[0]'],
    [{ rules: { r: { duration: '6 hours' } } }, 'blocklist.rules.r.duration'],
    [{ rules: { r: { duration: '6h', minSensor: 2 } } }, 'blocklist.rules.r.minSensor'],
  ] as const) {
    const config = writeConfig(dataDir, blocklist);
    const r = await runCli([
      'serve',
      '--config',
      config,
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--admin-listen',
      '',
    ]);
    assert.equal(r.code, 78, r.stderr);
    assert.match(r.stderr, new RegExp(key.replace(/[.[\]]/g, '\\$&')));
  }
  const config = writeConfig(dataDir, BLOCKLIST);
  const server = await serve(t, dataDir, config);
  const key = await addSensorCli(dataDir, 'fw1');
  const feed = await addFeed(dataDir, config, 'edge', 'plain');
  writeConfig(dataDir, { ...BLOCKLIST, allow: ['not-a-network'] });
  server.child.kill('SIGHUP');
  await until(
    () =>
      server.logs.some(
        (l) => l.msg === 'configuration not reloaded: the running configuration stays in force',
      ),
    GUARD_MS,
    'the refused reload',
  );
  await blockThroughFeed(t, { dataDir, server, key, password: feed.password }, '192.0.2.44');
  assert.equal(server.child.exitCode, null);
});

test('under --workers the primary runs the engine once and every worker serves the feed', async (t) => {
  const dataDir = makeTempDir(t);
  const config = writeConfig(dataDir, BLOCKLIST);
  const server = await spawnServe(dataDir, ['--config', config, '--workers', '2']);
  t.after(() => server.stop('SIGKILL'));
  const key = await addSensorCli(dataDir, 'fw1');
  const feed = await addFeed(dataDir, config, 'edge', 'plain');
  // Each curl is a new connection: the workers take turns, and each must serve the block.
  await blockThroughFeed(t, { dataDir, server, key, password: feed.password }, '198.51.100.30');
  for (let i = 0; i < 6; i++) {
    assert.equal(
      (await curlFeed(dataDir, `${server.url}/feeds/edge`, 'edge', feed.password)).body,
      '198.51.100.30\n',
    );
  }
  const blocked = server.logs.filter((l) => l.msg === 'address blocked');
  assert.equal(blocked.length, 1, JSON.stringify(blocked));
  // The primary's engine and the workers' feeds in one /metrics.
  const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text();
  assert.match(metrics, /^threatcol_blocks_active 1$/m);
  assert.match(metrics, /^threatcol_blocks_made_total\{rule="critical"\} 1$/m);
  const served = /^threatcol_feed_requests_total\{feed="edge",status="200"\} (\d+)$/m.exec(metrics);
  assert.ok(Number(served?.[1]) >= 7, metrics);
  assert.match(metrics, /^threatcol_feed_entries\{feed="edge"\} 1$/m);
});

test('block remove is not undone by the records that made the block, at once nor after a kill -9 and restart', async (t) => {
  const dataDir = makeTempDir(t);
  const config = writeConfig(dataDir, BLOCKLIST);
  let server = await serve(t, dataDir, config);
  const key = await addSensorCli(dataDir, 'fw1');
  const feed = await addFeed(dataDir, config, 'edge', 'plain');
  await blockThroughFeed(t, { dataDir, server, key, password: feed.password }, '198.51.100.40');
  const removed = await runCli([
    'block',
    'remove',
    '198.51.100.40',
    '--data-dir',
    dataDir,
    '--config',
    config,
  ]);
  assert.equal(removed.code, 0, removed.stderr);
  const body = async () => (await curlFeed(dataDir, `${server.url}/feeds/edge`, 'edge', feed.password)).body;
  await until(async () => (await body()) === '', GUARD_MS, 'the block out of the feed');
  // The engine reads its rules' window again at a start: the record that made the block is in it.
  server.child.kill('SIGKILL');
  await server.exited;
  server = await serve(t, dataDir, config);
  await until(
    () => server.logs.some((l) => l.msg === "the rules' windows read again from the stored records"),
    GUARD_MS,
    'the window read again',
  );
  // A record read after the restart: once its block is served, the removed one would be too.
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const reply = await post(
    server.url,
    '/generic',
    [genericRecord({ source_ip: '198.51.100.41', criticality: 4 })],
    {
      sensor: 'fw1',
      key,
      agent,
    },
  );
  assert.equal(reply.status, 200, reply.text);
  await until(async () => (await body()).includes('198.51.100.41'), GUARD_MS, 'the later block in the feed');
  assert.equal(await body(), '198.51.100.41\n', 'the removed block stays removed');
});

test("under --workers the failed logins an address may make are the collector's, shared out among the workers", async (t) => {
  const dataDir = makeTempDir(t);
  const config = writeConfig(dataDir, BLOCKLIST);
  const server = await spawnServe(dataDir, ['--config', config, '--workers', '4']);
  t.after(() => server.stop('SIGKILL'));
  await addFeed(dataDir, config, 'edge', 'plain');
  // Each request on a connection of its own: the workers take turns.
  const statuses = new Map<number, number>();
  for (let i = 0; i < 60; i++) {
    const agent = trustingAgent(dataDir);
    const res = await request(`${server.url}/feeds/edge`, {
      headers: { authorization: `Basic ${Buffer.from('edge:wrong-password').toString('base64')}` },
      dispatcher: agent,
    });
    await res.body.dump();
    await agent.close();
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  }
  t.diagnostic(`60 wrong passwords under 4 workers: ${JSON.stringify(Object.fromEntries(statuses))}`);
  // 20 at once in all (5 a worker), then one every 3 s: not 20 a worker.
  assert.ok((statuses.get(401) ?? 0) <= 22, JSON.stringify(Object.fromEntries(statuses)));
  assert.ok((statuses.get(429) ?? 0) >= 38);
});

/** Posts a critical record about `address` (until one is stored) and waits until feed `edge` serves its block alone. */
async function blockThroughFeed(
  t: TestContext,
  c: { dataDir: string; server: ServeProcess; key: string; password: string },
  address: string,
): Promise<void> {
  const agent = trustingAgent(c.dataDir);
  t.after(() => agent.close());
  const record = [genericRecord({ source_ip: address, criticality: 4 })];
  await until(
    async () =>
      (await post(c.server.url, '/generic', record, { sensor: 'fw1', key: c.key, agent })).status === 200,
    GUARD_MS,
    'a record stored',
  );
  await until(
    async () =>
      (await curlFeed(c.dataDir, `${c.server.url}/feeds/edge`, 'edge', c.password)).body === `${address}\n`,
    GUARD_MS,
    `the block of ${address} in the feed`,
  );
}
