// `store migrate --to nats` run again after decisions were removed on NATS: the removals stand. A re-run is how
// the records a files collector stored after the first run are carried over, while collectors on NATS already
// serve the feeds; a block an operator removed there must not be served again, an allow entry withdrawn must not
// protect its network again, and a feed removed (its password leaked) must not answer its old credentials again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import type { MigrateSummary } from '../../src/cli/store-migrate.js';
import { loadConfig } from '../../src/config/load-config.js';
import { copyDecisions } from '../../src/store/copy-store.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { blockChange, engineStore } from '../helpers/decisions.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { openStoreAt } from '../helpers/open-store.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

test('store migrate run again leaves what NATS removed since removed (block, allow entry, feed), named', async (t) => {
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };
  const natsEnv = { ...env, THREATCOL_STORE_BACKEND: 'nats' };
  const dataDir = makeTempDir(t);
  const natsDir = makeTempDir(t);
  const on = async (dir: string, args: string[], runEnv: Record<string, string> = {}) => {
    const r = await runCli([...args, '--data-dir', dir], { env: runEnv });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const onNats = async (args: string[]) =>
    JSON.parse(await on(natsDir, [...args, '--json'], natsEnv)) as Record<string, unknown>[];
  const migrate = async () =>
    (JSON.parse(await on(dataDir, ['store', 'migrate', '--to', 'nats', '--json'], env)) as MigrateSummary)
      .decisions;

  await on(dataDir, ['allow', 'add', '203.0.113.0/24', '--reason', 'partner']);
  await on(dataDir, ['allow', 'add', '192.0.2.0/24', '--reason', 'lab']);
  await on(dataDir, ['block', 'add', '198.51.100.7', '--for', '2h', '--reason', 'scanner']);
  await on(dataDir, ['block', 'add', '198.51.100.9', '--for', '2h', '--reason', 'kept']);
  await on(dataDir, ['feed', 'add', 'edge', '--format', 'plain']);
  assert.deepEqual(await migrate(), {
    copied: 5,
    already_present: 0,
    left_in_target: [],
    only_in_target: [],
  });

  // On NATS since: the block removed, the allow entry and the feed withdrawn.
  await on(natsDir, ['block', 'remove', '198.51.100.7'], natsEnv);
  await on(natsDir, ['allow', 'remove', '203.0.113.0/24'], natsEnv);
  await on(natsDir, ['allow', 'remove', '192.0.2.0/24'], natsEnv);
  await on(natsDir, ['feed', 'remove', 'edge'], natsEnv);
  // Made on the files collector after the first run, and an allow entry given again there after NATS's
  // removal: newer than it, copied.
  await on(dataDir, ['block', 'add', '198.51.100.10', '--for', '2h', '--reason', 'new']);
  await on(dataDir, ['allow', 'remove', '192.0.2.0/24']);
  await on(dataDir, ['allow', 'add', '192.0.2.0/24', '--reason', 'lab again']);

  const again = await migrate();
  assert.deepEqual(
    { ...again, left_in_target: [...again.left_in_target].sort() },
    {
      copied: 2,
      already_present: 1,
      left_in_target: ['allow 203.0.113.0/24', 'block 198.51.100.7/32', 'feed edge'],
      only_in_target: [],
    },
  );
  assert.deepEqual((await onNats(['block', 'list'])).map((b) => b.address).sort(), [
    '198.51.100.10/32',
    '198.51.100.9/32',
  ]);
  assert.deepEqual(
    (await onNats(['allow', 'list'])).map((a) => [a.network, a.reason]),
    [['192.0.2.0/24', 'lab again']],
  );
  assert.deepEqual(await onNats(['feed', 'list']), []);
});

test('store migrate run again carries a block removed from the files store since: NATS stops serving it', async (t) => {
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };
  const dataDir = makeTempDir(t);
  const on = async (args: string[], runEnv: Record<string, string> = {}, dir = dataDir) => {
    const r = await runCli([...args, '--data-dir', dir], { env: runEnv });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const blocksOnNats = async () =>
    (
      JSON.parse(
        await on(['block', 'list', '--json'], { ...env, THREATCOL_STORE_BACKEND: 'nats' }, makeTempDir(t)),
      ) as { address: string }[]
    ).map((b) => b.address);
  await on(['block', 'add', '198.51.100.7', '--for', '2h', '--reason', 'scanner']);
  await on(['block', 'add', '198.51.100.9', '--for', '2h', '--reason', 'kept']);
  await on(['allow', 'add', '203.0.113.0/24', '--reason', 'partner']);
  await on(['feed', 'add', 'edge', '--format', 'plain']);
  await on(['store', 'migrate', '--to', 'nats'], env);
  assert.deepEqual((await blocksOnNats()).sort(), ['198.51.100.7/32', '198.51.100.9/32']);
  // Removed on the files collector after the first run (its removal's mark is what the files store keeps).
  await on(['block', 'remove', '198.51.100.7']);
  // The files store keeps no mark of an allow entry's or a feed's removal: NATS keeps them (made there or
  // removed here, the copy cannot tell), and the summary names them for the operator to remove by hand.
  await on(['allow', 'remove', '203.0.113.0/24']);
  await on(['feed', 'remove', 'edge']);
  const again = JSON.parse(await on(['store', 'migrate', '--to', 'nats', '--json'], env)) as MigrateSummary;
  assert.deepEqual(again.decisions.only_in_target, ['allow 203.0.113.0/24', 'feed edge']);
  assert.deepEqual(await blocksOnNats(), ['198.51.100.9/32']);
  const text = await on(['store', 'migrate', '--to', 'nats'], env);
  assert.match(
    text,
    /\nAllow entries and feeds in NATS and not in the files store, left as they are \(removed here since an earlier run, or made in NATS\): allow 203\.0\.113\.0\/24, feed edge\n/,
  );
});

test("store migrate carries a block remove, not a block by hand's own end: the target's block of that address stays", async (t) => {
  const nats = await startNatsServer(t);
  const env = { THREATCOL_NATS_SERVERS: nats.url, THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '15000' };
  const dataDir = makeTempDir(t);
  const open = (overrides: Record<string, unknown>, dir: string) => openStoreAt(dir, overrides);
  const hour = 3_600_000;
  const at = new Date(Date.now() - hour).toISOString();
  // The files store: a block by hand ended an hour ago (the clean-up's mark), and a block removed then.
  const files = await open({}, dataDir);
  await files.decisions.apply([
    { kind: 'cleared', key: '198.51.100.20/32', value: { address: '198.51.100.20/32', at, ended: true } },
    { kind: 'cleared', key: '198.51.100.21/32', value: { address: '198.51.100.21/32', at } },
  ]);
  await files.close();
  // NATS: a block of each address, made before that and in force for a day.
  const target = await open({ 'store.backend': 'nats', 'nats.servers': [nats.url] }, makeTempDir(t));
  await target.decisions.apply(
    ['198.51.100.20/32', '198.51.100.21/32'].map((address) =>
      blockChange(address, Date.now() - 2 * hour, Date.now() + 24 * hour, { rule: 'r' }),
    ),
  );
  await target.close();
  const migrated = await runCli(['store', 'migrate', '--to', 'nats', '--data-dir', dataDir], { env });
  assert.equal(migrated.code, 0, migrated.stderr);
  const listed = await runCli(['block', 'list', '--json', '--data-dir', makeTempDir(t)], {
    env: { ...env, THREATCOL_STORE_BACKEND: 'nats' },
  });
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { address: string }[]).map((b) => b.address),
    ['198.51.100.20/32'],
    'the removal carried, the end not',
  );
});

test('a block by hand that ends after a block remove of its address keeps the removal for store migrate to carry', async (t) => {
  const s = await engineStore(t, {
    'blocklist.rules': { r: { minCriticality: 4, duration: '10m', within: '1h' } },
  });
  let offset = 0;
  const now = () => Date.now() + offset;
  const unit = '198.51.100.77/32';
  const hour = 3_600_000;
  // The target as an earlier `store migrate` left it: a rule's block of the address, made an hour ago, for a day.
  const dir = makeTempDir(t);
  const target = await openStore(
    loadConfig({ env: {}, defaultConfigPath: '/nonexistent/x.json', overrides: { dataDir: dir } }).config,
    { dataDir: dir, logger: pino({ level: 'silent' }) },
  );
  t.after(() => target.close());
  await target.decisions.apply([blockChange(unit, now() - hour, now() + 24 * hour, { rule: 'r' })]);
  // The source: `block remove` of that block half an hour ago, then `block add --for 2m`, which ends.
  const manualUntil = now() + 120_000;
  await s.store.decisions.apply([
    { kind: 'cleared', key: unit, value: { address: unit, at: new Date(now() - hour / 2).toISOString() } },
    blockChange(unit, now(), manualUntil),
  ]);
  s.startEngine({ now });
  offset += 5 * 60_000;
  await s.log.append([
    record({ src_ip: '203.0.113.9', criticality: 4, received_at: new Date(now()).toISOString() }),
  ]);
  // The clean-up writes the end's mark, then removes the block.
  await until(
    async () => {
      const state = await s.store.decisions.read();
      return state.cleared.get(unit)?.at === new Date(manualUntil).toISOString() && !state.blocks.has(unit);
    },
    30_000,
    'the clean-up kept the end and removed the block',
  );
  assert.equal((await s.store.decisions.read()).cleared.get(unit)?.ended, undefined, 'still a removal');
  await copyDecisions(s.store, target, { dryRun: false, overwriteSensors: false });
  assert.equal((await target.decisions.read()).blocks.get(unit), undefined, 'the removal carried');
});
