// The `feed` commands through the real binary, without a collector: names that cannot be part of a URL are
// refused and nothing is stored; `feed show` and `feed list --json` say every setting a feed was made with
// (where it is served, its family, cap and merging), so an admin can tell why a firewall gets 403.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('feed add refuses names with /, .., spaces, non-ASCII letters or over 64 characters, storing nothing', async (t) => {
  const dataDir = makeTempDir(t);
  for (const name of ['a/b', '..', 'a b', 'é', 'feed.', 'x'.repeat(65)]) {
    const r = await runCli(['feed', 'add', name, '--format', 'plain', '--data-dir', dataDir]);
    assert.equal(r.code, 65, `${name}: ${r.stderr}`);
    assert.match(r.stderr, /INVALID_ARGUMENT: .* is not a feed name: 1-64 letters, digits/);
  }
  // /metrics' label for requests to names that are no feed.
  const unknown = await runCli(['feed', 'add', 'unknown', '--format', 'plain', '--data-dir', dataDir]);
  assert.equal(unknown.code, 65, unknown.stderr);
  assert.match(unknown.stderr, /INVALID_ARGUMENT: "unknown" is not a feed name: \/metrics/);
  const bogus = await runCli(['feed', 'add', 'edge', '--format', 'bogus', '--data-dir', dataDir]);
  assert.equal(bogus.code, 64, bogus.stderr);
  assert.match(bogus.stderr, /Allowed choices are paloalto, fortinet, plain, mikrotik, nftables, json/);
  const list = await runCli(['feed', 'list', '--json', '--data-dir', dataDir]);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(JSON.parse(list.stdout), []);
});

test('feed show and feed list --json name the --from networks, the family, the cap and --aggregate', async (t) => {
  const dataDir = makeTempDir(t);
  const add = await runCli([
    'feed',
    'add',
    'edge',
    '--format',
    'paloalto',
    '--ipv4-only',
    '--aggregate',
    '--from',
    '192.0.2.0/24',
    '--from',
    '::ffff:198.51.100.0/120',
    '--data-dir',
    dataDir,
  ]);
  assert.equal(add.code, 0, add.stderr);
  const show = await runCli(['feed', 'show', 'edge', '--data-dir', dataDir]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^ {2}Family: +ipv4$/m);
  assert.match(show.stdout, /^ {2}Cap: +50000 \(the format's default\)$/m);
  assert.match(show.stdout, /^ {2}From: +192\.0\.2\.0\/24, 198\.51\.100\.0\/24 \(403 elsewhere\)$/m);
  assert.match(show.stdout, /^ {2}Aggregate: +yes$/m);
  const [listed] = JSON.parse((await runCli(['feed', 'list', '--json', '--data-dir', dataDir])).stdout) as {
    from: string[] | null;
    aggregate: boolean;
    family: string;
  }[];
  assert.deepEqual(listed?.from, ['192.0.2.0/24', '198.51.100.0/24']);
  assert.equal(listed?.aggregate, true);
  const plain = await runCli(['feed', 'add', 'open', '--format', 'plain', '--data-dir', dataDir]);
  assert.equal(plain.code, 0, plain.stderr);
  const open = (await runCli(['feed', 'show', 'open', '--data-dir', dataDir])).stdout;
  assert.match(open, /^ {2}From: +any address$/m);
  assert.match(open, /^ {2}Cap: +none$/m);
  assert.match(open, /^ {2}Aggregate: +no$/m);
});
