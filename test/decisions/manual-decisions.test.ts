// Manual decisions through the real binary (files store, no collector needed): `block add` refusing every
// address and private ranges without --force, whatever form the network is written in (an IPv4-mapped IPv6
// address is its IPv4 one); `block list [--json] [--all]` with its fields and what an allow entry keeps out;
// `allow add/list/remove`. Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { blockChange, engineStore } from '../helpers/decisions.js';
import { makeTempDir } from '../helpers/temp-dir.js';

interface ListedBlock {
  address: string;
  rule: string;
  reason: string;
  since: string;
  until: string;
  records: number;
  sensors: string[];
  who: string;
  active: boolean;
  allowedBy: string | null;
}

test('block add refuses every address and, without --force, private ranges in any form and networks wider than an IPv4 /8 or IPv6 /16; mapped IPv6 is its IPv4 address; block list and allow entries', async (t) => {
  const dataDir = makeTempDir(t);
  const config = join(dataDir, 'config.json');
  writeFileSync(config, JSON.stringify({ blocklist: { allow: ['::ffff:192.0.2.0/124'] } }));
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir, '--config', config]);
  const ok = async (...args: string[]) => {
    const r = await cli(...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const blocks = async (...flags: string[]) =>
    JSON.parse(await ok('block', 'list', '--json', ...flags)) as ListedBlock[];

  for (const [network, key, force] of [
    ['0.0.0.0/0', '0.0.0.0/0', true],
    ['::/0', '::/0', true],
    ['::ffff:0:0/96', '0.0.0.0/0', true],
    ['0.0.0.0/1', '0.0.0.0/1', false],
    ['10.0.0.1/8', '10.0.0.0/8', false],
    ['::ffff:10.0.0.1', '10.0.0.1/32', false],
    ['::ffff:192.168.0.0/112', '192.168.0.0/16', false],
    ['fd00::1', 'fd00::1/128', false],
    // NAT64's name for a private address, and the translator's whole prefix.
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1/128', false],
    ['64:ff9b::/96', '64:ff9b::/96', false],
    // Public, and wider than an IPv4 /8 or an IPv6 /16.
    ['64.0.0.0/7', '64.0.0.0/7', false],
    ['2000::/3', '2000::/3', false],
  ] as const) {
    for (const flags of force ? [[], ['--force']] : [[]]) {
      const r = await cli('block', 'add', network, '--for', '1h', '--reason', 'x', ...flags);
      assert.equal(r.code, 65, `${network} ${flags.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, new RegExp(`INVALID_ARGUMENT: ${key.replace(/[.]/g, '\\.')} `), network);
    }
  }
  assert.deepEqual(await blocks('--all'), [], 'nothing refused was stored');
  // As wide as that and no wider, or wider with --force: made.
  await ok('block', 'add', '64.0.0.0/8', '--for', '1h', '--reason', 'x');
  await ok('block', 'add', '2001::/16', '--for', '1h', '--reason', 'x');
  await ok('block', 'add', '2000::/3', '--for', '1h', '--reason', 'x', '--force');
  await ok('block', 'remove', '64.0.0.0/8');
  await ok('block', 'remove', '2001::/16');
  await ok('block', 'remove', '2000::/3');
  assert.match(
    await ok('block', 'add', '::ffff:10.0.0.1', '--for', '1h', '--reason', 'lab', '--force'),
    /10\.0\.0\.1\/32/,
  );

  const before = Date.now();
  assert.match(
    await ok('block', 'add', '::ffff:203.0.113.9', '--for', '2h', '--reason', 'scanner'),
    /203\.0\.113\.9\/32/,
  );
  assert.doesNotMatch(await ok('block', 'add', '198.51.100.7', '--for', '2h', '--reason', 'x'), /replaces/);
  // Again, shorter: made as asked, and the longer block it replaces is said.
  assert.match(
    await ok('block', 'add', '198.51.100.7', '--for', '1h', '--reason', 'brute force'),
    /It replaces the block by hand that was to end 20\d\d-/,
  );
  assert.match(
    await ok('block', 'add', '192.0.2.5', '--for', '1h', '--reason', 'in the configured allow'),
    /kept out of every feed by allow ::ffff:192\.0\.2\.0\/124/,
  );
  await ok('block', 'add', '2001:db8::1', '--for', '1ms', '--reason', 'gone at once');
  const listed = await blocks();
  assert.deepEqual(listed.map((b) => b.address).sort(), [
    '10.0.0.1/32',
    '192.0.2.5/32',
    '198.51.100.7/32',
    '203.0.113.9/32',
  ]);
  const scanner = listed.find((b) => b.address === '203.0.113.9/32') as ListedBlock;
  assert.equal(scanner.rule, 'manual');
  assert.equal(scanner.reason, 'scanner');
  assert.equal(scanner.records, 0);
  assert.deepEqual(scanner.sensors, []);
  assert.equal(scanner.who, userInfo().username);
  assert.equal(Date.parse(scanner.until) - Date.parse(scanner.since), 2 * 3_600_000);
  assert.ok(Date.parse(scanner.since) >= before - 1000 && Date.parse(scanner.since) <= Date.now());
  assert.equal(listed.find((b) => b.address === '192.0.2.5/32')?.allowedBy, '::ffff:192.0.2.0/124');
  const all = await blocks('--all');
  assert.equal(
    all.find((b) => b.address === '2001:db8::1/128')?.active,
    false,
    '--all lists the expired block',
  );

  // An allow entry written as mapped IPv6 keeps the IPv4 block out; removed, the block is back in.
  assert.match(
    await ok('allow', 'add', '::ffff:198.51.100.0/120', '--reason', 'partner', '--for', '1h'),
    /198\.51\.100\.0\/24/,
  );
  const allows = JSON.parse(await ok('allow', 'list', '--json')) as {
    network: string;
    until: string | null;
  }[];
  assert.deepEqual(
    allows.map((a) => a.network),
    ['::ffff:192.0.2.0/124', '198.51.100.0/24'],
  );
  assert.notEqual(allows[1]?.until, null);
  assert.equal((await blocks()).find((b) => b.address === '198.51.100.7/32')?.allowedBy, '198.51.100.0/24');
  assert.match(await ok('block', 'list'), /198\.51\.100\.7\/32 .*kept out by allow 198\.51\.100\.0\/24/);
  await ok('allow', 'remove', '198.51.100.0/24');
  assert.equal((await blocks()).find((b) => b.address === '198.51.100.7/32')?.allowedBy, null);

  // An address inside a wider block (an IPv6 /64 unit): the error names the block to remove.
  await ok('block', 'add', '2001:db8:5::/64', '--for', '1h', '--reason', 'a /64');
  const inside = await cli('block', 'remove', '2001:db8:5::1');
  assert.notEqual(inside.code, 0);
  assert.match(inside.stderr, /no block of 2001:db8:5::1\/128; it lies in the block of 2001:db8:5::\/64/);
  await ok('block', 'remove', '2001:db8:5::/64');
  await ok('block', 'remove', '::ffff:203.0.113.9');
  assert.equal(
    (await blocks()).some((b) => b.address === '203.0.113.9/32'),
    false,
  );
});

test('allow add refuses every address without --force: it would turn every rule off', async (t) => {
  const dataDir = makeTempDir(t);
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir]);
  for (const network of ['0.0.0.0/0', '::/0', '::ffff:0:0/96']) {
    const r = await cli('allow', 'add', network, '--reason', 'oops');
    assert.equal(r.code, 65, `${network}: ${r.stdout}`);
    assert.match(r.stderr, /INVALID_ARGUMENT: .*\/0 would allow every address/, network);
  }
  const none = await cli('allow', 'list', '--json');
  assert.deepEqual(JSON.parse(none.stdout), [], 'nothing refused was stored');
  const forced = await cli('allow', 'add', '::/0', '--reason', 'blocking off for IPv6', '--force');
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /Allowed ::\/0/);
});

test('block remove takes a block stored under its mapped IPv6 text (before such addresses were read as IPv4) by that text', async (t) => {
  const { store, config } = await engineStore(t, {});
  const now = Date.now();
  // As a block add of ::ffff:10.0.0.1 stored it before: an IPv6 /128 keyed by IPv6 text.
  await store.decisions.apply([blockChange('::ffff:a00:1/128', now - 1000, now + 3_600_000)]);
  const cli = (...args: string[]) => runCli([...args, '--data-dir', config.dataDir as string]);
  const listed = await cli('block', 'list', '--json');
  assert.deepEqual(
    (JSON.parse(listed.stdout) as ListedBlock[]).map((b) => b.address),
    ['::ffff:a00:1/128'],
  );
  const removed = await cli('block', 'remove', '::ffff:a00:1/128');
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /Block of ::ffff:a00:1\/128 removed/);
  assert.deepEqual(JSON.parse((await cli('block', 'list', '--json')).stdout), []);
});
