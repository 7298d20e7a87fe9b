// Blocklists on a three-node NATS cluster (stream and buckets with 3 replicas), through the real binary: two
// collectors with one rule, records about each address posted to both over real TLS. One engine decides for
// the cluster: each address is blocked once, and both collectors' feeds (fetched over real TLS with Basic
// auth) list the same entries. Then the node leading the decisions bucket is killed -9 and more records come:
// no block made before the kill is missing after, and the new ones appear, each once. Uses dist/.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Agent } from 'undici';
import { request } from 'undici';
import { addSensorCli, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { startNatsCluster, streamLeader } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

/** Hang guard for anything the cluster does after a kill (an election takes seconds; the lease, 15 s). */
const GUARD_MS = 90_000;
const BUCKET = 'threatcol_decisions';
const BEFORE = Array.from({ length: 12 }, (_, i) => `198.51.100.${10 + i}`);
const AFTER = Array.from({ length: 12 }, (_, i) => `203.0.113.${10 + i}`);

interface FeedBlock {
  address: string;
  until: string;
  rule: string;
}

test('NATS cluster: two collectors, one decision per address, the same feed on both; the decisions bucket’s leader killed -9 loses no block', async (t) => {
  const cluster = await startNatsCluster(t, 3);
  const dir = makeTempDir(t);
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      store: { backend: 'nats' },
      nats: { servers: cluster.servers, replicas: 3, publishTimeoutMs: 15_000 },
      registry: { pollIntervalMs: 100 },
      blocklist: { rules: { critical: { minCriticality: 4, duration: '24h' } }, bucket: BUCKET },
    }),
  );
  const [dirA, dirB] = [makeTempDir(t), makeTempDir(t)];
  const key = await addSensorCli(dirA, 'fw1', ['--config', config]);
  const added = await runCli([
    'feed',
    'add',
    'edge',
    '--format',
    'json',
    '--json',
    '--config',
    config,
    '--data-dir',
    dirA,
  ]);
  assert.equal(added.code, 0, added.stderr);
  const { password } = JSON.parse(added.stdout) as { password: string };

  const collectors: { name: string; serve: ServeProcess; agent: Agent }[] = [];
  for (const [name, dataDir] of [
    ['a', dirA],
    ['b', dirB],
  ] as const) {
    const serve = await spawnServe(dataDir, ['--config', config]);
    t.after(() => serve.stop('SIGKILL'));
    const agent = trustingAgent(dataDir);
    t.after(() => agent.close());
    collectors.push({ name, serve, agent });
  }
  await until(
    () =>
      collectors.some((c) =>
        c.serve.logs.some((l) => l.msg === 'this collector runs the decisions engine now'),
      ),
    GUARD_MS,
    'one collector runs the engine',
  );

  /** Each address posted once to each collector (retried while the cluster elects: a 503 stores nothing). */
  const send = async (addresses: string[]) => {
    for (const address of addresses) {
      for (const c of collectors) {
        await until(
          async () =>
            (
              await post(c.serve.url, '/generic', [genericRecord({ source_ip: address, criticality: 4 })], {
                sensor: 'fw1',
                key,
                agent: c.agent,
              })
            ).status === 200,
          GUARD_MS,
          `a record about ${address} stored through ${c.name}`,
        );
      }
    }
  };
  const feed = async (c: (typeof collectors)[number]): Promise<FeedBlock[] | null> => {
    const res = await request(`${c.serve.url}/feeds/edge`, {
      headers: { authorization: `Basic ${Buffer.from(`edge:${password}`).toString('base64')}` },
      dispatcher: c.agent,
    });
    const text = await res.body.text();
    return res.statusCode === 200 ? (JSON.parse(text) as FeedBlock[]) : null;
  };
  const listed = async (): Promise<{ address: string; rule: string; since: string; until: string }[]> => {
    const r = await runCli(['block', 'list', '--json', '--config', config, '--data-dir', dirB]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const blockedLines = () =>
    collectors.flatMap((c) => c.serve.logs.filter((l) => l.msg === 'address blocked').map((l) => l.address));
  const moreBlocked = () =>
    collectors
      .flatMap((c) => c.serve.logs.filter((l) => l.msg === 'more addresses blocked'))
      .reduce((n, l) => n + (l.blocks as number), 0);
  /** Both feeds list exactly `addresses` (as /32), the same entries on both. */
  const feedsHold = async (addresses: string[]) => {
    const want = addresses.map((a) => `${a}/32`).sort();
    const [fa, fb] = await Promise.all(collectors.map((c) => feed(c).catch(() => null)));
    if (!fa || !fb) return false;
    const got = (f: FeedBlock[]) =>
      f.map((b) => (b.address.includes('/') ? b.address : `${b.address}/32`)).sort();
    return JSON.stringify(got(fa)) === JSON.stringify(want) && JSON.stringify(fa) === JSON.stringify(fb);
  };
  /** One entry per address, each lasting the rule's 24 h from its record: a first block, decided once. */
  const assertOncePerAddress = async (addresses: string[]) => {
    const blocks = await listed();
    const keys = blocks.map((b) => b.address);
    assert.equal(new Set(keys).size, keys.length, `duplicates in block list: ${keys.join(' ')}`);
    assert.deepEqual([...keys].sort(), addresses.map((a) => `${a}/32`).sort());
    for (const b of blocks) {
      assert.equal(b.rule, 'critical');
      assert.equal(
        Date.parse(b.until) - Date.parse(b.since),
        86_400_000,
        `${b.address} lasts 24 h (a first block)`,
      );
    }
    // Up to 10 new blocks a batch are logged one line each, the rest in one line: every block made counted.
    const lines = blockedLines();
    assert.equal(new Set(lines).size, lines.length, `an address blocked more than once: ${lines.join(' ')}`);
    assert.equal(lines.length + moreBlocked(), addresses.length, 'one block made per address, by one engine');
  };

  await send(BEFORE);
  const ms = await until(() => feedsHold(BEFORE), GUARD_MS, 'every address in both feeds');
  t.diagnostic(`${BEFORE.length} addresses in both feeds ${ms} ms after the last 200`);
  await assertOncePerAddress(BEFORE);
  const before = await listed();

  const leader = await streamLeader(cluster.servers, `KV_${BUCKET}`);
  const victim = cluster.nodes.find((n) => n.name === leader);
  assert.ok(victim, `the bucket's leader ${leader} is one of ours`);
  await victim.kill();
  const killedAt = Date.now();
  await send(AFTER);
  const recovered = await until(
    () => feedsHold([...BEFORE, ...AFTER]),
    GUARD_MS,
    'old and new blocks in both feeds',
  );
  t.diagnostic(
    `bucket leader ${leader} killed; ${AFTER.length} more addresses stored through both and every block in ` +
      `both feeds ${Date.now() - killedAt} ms after the kill (${recovered} ms after the last 200)`,
  );
  const failed = collectors.flatMap((c) =>
    c.serve.logs.filter((l) => l.level === 50 && String(l.msg).startsWith('the decisions engine failed')),
  );
  t.diagnostic(
    `the engine's batch read again ${failed.length} time(s): ${failed.map((l) => l.err).join(' | ')}`,
  );
  await assertOncePerAddress([...BEFORE, ...AFTER]);
  const after = await listed();
  for (const b of before) {
    const same = after.find((x) => x.address === b.address);
    assert.deepEqual(same, b, `${b.address} is kept as it was`);
  }
});
