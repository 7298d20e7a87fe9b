// The blocklist commands' reads while a three-node NATS cluster cannot answer, through the real binary: two
// nodes paused (SIGSTOP: the cluster has no quorum, requests to them are never answered) and `block list`
// connected to the third. It fails as the store being unavailable (exit 69, UNAVAILABLE) within its bounded
// wait, never as an internal error (70) or a hang; and when quorum comes back while it waits (one node
// resumed: an election, the old leader still hung), it lists all 40 blocks. Uses dist/.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, startCli } from '../helpers/cli.js';
import { type NatsNode, startNatsCluster, streamLeader } from '../helpers/nats-server.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { block } from '../store/decisions-contract.js';

const BUCKET = 'threatcol_decisions';
/** The CLI's wait for a cluster that cannot answer (nats.publishTimeoutMs), short: it runs out here. */
const BUDGET_MS = 3000;
/** The wait that lets an election finish (as in the failover test). */
const ELECTION_BUDGET_MS = 30_000;
/** Hang guard of one command (killed then: no exit code), far over its budget and start. */
const CLI_GUARD_MS = 120_000;

function pause(node: NatsNode): void {
  if (node.pid) process.kill(node.pid, 'SIGSTOP');
}
function resume(node: NatsNode): void {
  if (node.pid) process.kill(node.pid, 'SIGCONT');
}

test('NATS cluster without quorum: block list exits 69 UNAVAILABLE (not 70, no hang); with quorum back while it waits, it lists the blocks', async (t) => {
  const cluster = await startNatsCluster(t, 3);
  // SIGKILL (the cluster's teardown) ends a paused process too; resumed first so nothing is left stopped.
  t.after(() => {
    for (const n of cluster.nodes) if (n.running) resume(n);
  });
  const dir = makeTempDir(t);
  const dataDir = makeTempDir(t);
  const configFile = (name: string, servers: string[], publishTimeoutMs = BUDGET_MS) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        store: { backend: 'nats' },
        nats: { servers, replicas: 3, publishTimeoutMs },
        blocklist: { bucket: BUCKET },
      }),
    );
    return ['--config', path, '--data-dir', dataDir];
  };
  const all = configFile('all', cluster.servers);
  const added = await runCli(['block', 'add', '198.51.100.7', '--for', '24h', '--reason', 'test', ...all], {
    timeoutMs: CLI_GUARD_MS,
  });
  assert.equal(added.code, 0, added.stderr);
  // And more, written by a store of its own: a read is one request per entry or one listing of them all.
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: {
      dataDir,
      'store.backend': 'nats',
      'nats.servers': cluster.servers,
      'nats.replicas': 3,
      'blocklist.bucket': BUCKET,
    },
  });
  const writer = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const more = Array.from({ length: 39 }, (_, i) => block(`203.0.113.${i + 1}/32`));
  await writer.decisions.apply(more.map((b) => ({ kind: 'block', key: b.address, value: b })));
  await writer.close();
  const all40 = ['198.51.100.7/32', ...more.map((b) => b.address)].sort();

  // The command talks to one node that stays up; the bucket's leader is among the two paused.
  const leader = await streamLeader(cluster.servers, `KV_${BUCKET}`);
  const survivor = cluster.nodes.find((n) => n.name !== leader) as NatsNode;
  const paused = cluster.nodes.filter((n) => n !== survivor);
  const list = (budgetMs: number) =>
    startCli(['block', 'list', '--json', ...configFile(`one-${budgetMs}`, [survivor.url], budgetMs)], {
      timeoutMs: CLI_GUARD_MS,
    });

  for (const n of paused) pause(n);
  let started = Date.now();
  const refused = await list(BUDGET_MS).result;
  const refusedMs = Date.now() - started;
  t.diagnostic(`without quorum: exit ${refused.code} after ${refusedMs} ms: ${refused.stderr.trim()}`);
  assert.equal(refused.code, 69, `exit 69, not ${refused.code}: ${refused.stderr}`);
  assert.match(refused.stderr, /^threatcol: UNAVAILABLE: /m);
  assert.doesNotMatch(refused.stderr, /INTERNAL/);

  // Still paused for the second command; then the follower is resumed while it waits: quorum, without the
  // bucket's leader, so the two elect a new one.
  const follower = paused.find((n) => n.name !== leader) as NatsNode;
  started = Date.now();
  const running = list(ELECTION_BUDGET_MS);
  await until(() => Date.now() - started >= 500, 1000, 'half a second into the command');
  resume(follower);
  const listed = await running.result;
  t.diagnostic(`quorum back 0.5 s into the command: exit ${listed.code} after ${Date.now() - started} ms`);
  assert.equal(listed.code, 0, listed.stderr);
  const blocks = JSON.parse(listed.stdout) as { address: string }[];
  assert.deepEqual(blocks.map((b) => b.address).sort(), all40, `every block listed: ${listed.stdout}`);
});
