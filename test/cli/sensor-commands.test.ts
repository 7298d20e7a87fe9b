// End-to-end through the real binary: sensor add, list and revoke; files, modes and exit codes.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('sensor add prints the key once with the headers and the PAN-OS template; only a hash is stored', async (t) => {
  const dir = join(makeTempDir(t), 'data');
  const r = await runCli([
    'sensor',
    'add',
    'fw-edge-1',
    '--data-dir',
    dir,
    '--description',
    'edge',
    '--timezone',
    'Europe/Berlin',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const key = /Key: (tck_[A-Za-z0-9_-]{43})/.exec(r.stdout)?.[1];
  assert.ok(key, r.stdout);
  assert.match(r.stdout, new RegExp(`X-AUTH_KEY: ${key}`));
  assert.match(r.stdout, /X-SENSOR_NAME: fw-edge-1/);
  assert.match(r.stdout, /URI: {5}\/firewall/);
  assert.ok(r.stdout.includes('"severity":"$severity"'));
  assert.ok(r.stdout.includes('"sport":"$sport"'));
  const registry = readFileSync(join(dir, 'sensors.json'), 'utf8');
  assert.ok(!registry.includes(key));
  const stored = JSON.parse(registry).sensors[0];
  assert.match(stored.keys[0].hash, /^sha256:[0-9a-f]{64}$/);
  assert.equal(stored.timezone, 'Europe/Berlin');
  assert.equal(statSync(join(dir, 'sensors.json')).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
});

test('sensor add --json prints exactly name, key and optional fields', async (t) => {
  const dir = makeTempDir(t);
  const r = await runCli(['sensor', 'add', 's1', '--data-dir', dir, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(out).sort(), ['created_at', 'data_dir', 'key', 'name', 'store_backend']);
  assert.equal(out.name, 's1');
  assert.match(out.key, /^tck_[A-Za-z0-9_-]{43}$/);
});

test('bad names, time zones and duplicates exit 65 with the catalogue code', async (t) => {
  const dir = makeTempDir(t);
  await addSensorCli(dir, 'dup');
  for (const args of [
    ['sensor', 'add', 'dup'],
    ['sensor', 'add', '_bad'],
    ['sensor', 'add', 'a'.repeat(65)],
    ['sensor', 'add', 'bad name'],
    ['sensor', 'revoke', 'nobody'],
  ]) {
    const r = await runCli([...args, '--data-dir', dir]);
    assert.equal(r.code, 65, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^threatcol: (SENSOR_EXISTS|INVALID_ARGUMENT|SENSOR_NOT_FOUND): /);
  }
});

test('sensor list shows status and activity, never a key or hash; revoke marks it', async (t) => {
  const dir = makeTempDir(t);
  const key = await addSensorCli(dir, 'alpha');
  await addSensorCli(dir, 'beta');
  const revoked = await runCli(['sensor', 'revoke', 'beta', '--data-dir', dir]);
  assert.equal(revoked.code, 0, revoked.stderr);
  const table = await runCli(['sensor', 'list', '--data-dir', dir]);
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^NAME\s+STATUS\s+CREATED\s+LAST SEEN\s+LAST ADDRESS\s+RECORDS\s+DESCRIPTION$/m);
  assert.match(table.stdout, /^alpha\s+active\s+.*never\s+-\s+0\s+-$/m);
  assert.match(table.stdout, /^beta\s+revoked/m);
  const json = await runCli(['sensor', 'list', '--data-dir', dir, '--json']);
  const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
  assert.deepEqual(
    rows.map((r) => [r.name, r.status]),
    [
      ['alpha', 'active'],
      ['beta', 'revoked'],
    ],
  );
  for (const out of [table.stdout, json.stdout]) {
    assert.ok(!out.includes(key));
    assert.ok(!out.includes('sha256:'));
  }
});

test('usage errors exit 64; help and version exit 0; a bad config exits 78', async (t) => {
  const dir = makeTempDir(t);
  assert.equal((await runCli(['nonsense'])).code, 64);
  assert.equal((await runCli(['sensor', 'add'])).code, 64);
  assert.equal((await runCli(['--help'])).code, 0);
  assert.equal((await runCli(['--version'])).code, 0);
  const bad = await runCli(['sensor', 'list', '--data-dir', dir], { env: { THREATCOL_SERVER_PORT: 'x' } });
  assert.equal(bad.code, 78);
  assert.match(bad.stderr, /CONFIG_INVALID: .*server\.port/);
});
