// Black box: `sensor rotate` with a grace period against a running serve, and `sensor show [--firewall]`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const GRACE_MS = 4000;

test('rotate: old and new key both work during the grace, then only the new one; grace 0 ends it at once', async (t) => {
  const dataDir = makeTempDir(t);
  const serve = await spawnServe(dataDir, [], { env: { THREATCOL_REGISTRY_POLL_INTERVAL_MS: '100' } });
  t.after(() => serve.stop());
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const status = async (key: string) =>
    (await post(serve.url, '/generic', genericRecord(), { agent, sensor: 'fw-rot', key })).status;
  /** The daemon picks registry changes up by itself: poll until `key` gets `want` (or give up). */
  const until = async (key: string, want: number, deadlineMs = 10_000) => {
    const end = Date.now() + deadlineMs;
    let got = await status(key);
    while (got !== want && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 50));
      got = await status(key);
    }
    return got;
  };

  const oldKey = await addSensorCli(dataDir, 'fw-rot');
  assert.equal(await until(oldKey, 200), 200);

  const rotated = await runCli([
    'sensor',
    'rotate',
    'fw-rot',
    '--grace',
    `${GRACE_MS / 1000}s`,
    '--json',
    '--data-dir',
    dataDir,
  ]);
  const rotatedAt = Date.now();
  assert.equal(rotated.code, 0, rotated.stderr);
  const out = JSON.parse(rotated.stdout) as { name: string; key: string; old_keys_expire_at: string };
  assert.equal(out.name, 'fw-rot');
  assert.match(out.key, /^tck_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(out.key, oldKey);
  const expiresAt = Date.parse(out.old_keys_expire_at);
  assert.ok(Math.abs(expiresAt - (rotatedAt + GRACE_MS)) < 2000, out.old_keys_expire_at);

  assert.equal(await until(out.key, 200), 200);
  assert.ok(Date.now() < expiresAt, 'the machine is too slow to check the grace period');
  assert.equal(await status(oldKey), 200, 'the old key works during the grace');
  const list = await runCli(['sensor', 'list', '--json', '--data-dir', dataDir]);
  const listed = (JSON.parse(list.stdout) as { name: string; rotation_grace_until: string | null }[])[0];
  assert.equal(listed?.rotation_grace_until, out.old_keys_expire_at);

  assert.equal(await until(oldKey, 401, GRACE_MS + 10_000), 401);
  assert.ok(Date.now() >= expiresAt, 'the old key was refused only after its grace ended');
  assert.equal(await status(out.key), 200);

  // Grace 0: the previous key is refused as soon as the daemon sees the change.
  const now0 = await runCli(['sensor', 'rotate', 'fw-rot', '--grace', '0', '--data-dir', dataDir]);
  assert.equal(now0.code, 0, now0.stderr);
  const newest = /Key: (tck_\S+)/.exec(now0.stdout)?.[1] as string;
  assert.ok(newest);
  assert.match(now0.stdout, /old key is refused from now on/);
  assert.match(now0.stdout, new RegExp(`X-AUTH_KEY: ${newest}\\n  X-SENSOR_NAME: fw-rot`));
  assert.match(now0.stdout, /URI: {5}\/firewall/);
  assert.equal(await until(newest, 200), 200);
  assert.equal(await until(out.key, 401), 401);
});

test('rotate refuses unknown and revoked sensors and bad durations', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'gone');
  assert.equal((await runCli(['sensor', 'revoke', 'gone', '--data-dir', dataDir])).code, 0);
  const [unknown, revoked, badGrace] = await Promise.all([
    runCli(['sensor', 'rotate', 'nobody', '--data-dir', dataDir]),
    runCli(['sensor', 'rotate', 'gone', '--data-dir', dataDir]),
    runCli(['sensor', 'rotate', 'gone', '--grace', 'soon', '--data-dir', dataDir]),
  ]);
  assert.equal(unknown.code, 65);
  assert.match(unknown.stderr, /SENSOR_NOT_FOUND/);
  assert.equal(revoked.code, 77);
  assert.match(revoked.stderr, /SENSOR_REVOKED/);
  assert.equal(badGrace.code, 64);
});

test('sensor show prints the sensor, and --firewall the PAN-OS setup without any key', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw-paris', ['--timezone', 'Europe/Paris']);
  const [fw, human, json, missing] = await Promise.all([
    runCli(['sensor', 'show', 'fw-paris', '--firewall', '--data-dir', dataDir]),
    runCli(['sensor', 'show', 'fw-paris', '--data-dir', dataDir]),
    runCli(['sensor', 'show', 'fw-paris', '--json', '--data-dir', dataDir]),
    runCli(['sensor', 'show', 'nobody', '--data-dir', dataDir]),
  ]);
  assert.equal(fw.code, 0, fw.stderr);
  assert.ok(!fw.stdout.includes(key) && !fw.stdout.includes('tck_'));
  assert.match(fw.stdout, /HTTPS, port 443, TLS version 1\.2, no certificate profile/);
  assert.match(fw.stdout, /URI: {5}\/firewall/);
  assert.match(
    fw.stdout,
    /content-type: application\/json\n {4}X-AUTH_KEY: <the key printed by .*>\n {4}X-SENSOR_NAME: fw-paris/,
  );
  const template = /Payload:\n {4}(\{.*\})/.exec(fw.stdout)?.[1] as string;
  const vars = JSON.parse(template) as Record<string, string>;
  assert.deepEqual(Object.keys(vars).sort(), [
    'app',
    'dport',
    'dst',
    'proto',
    'severity',
    'sport',
    'src',
    'subcategory_of_app',
    'thr_category',
    'threat_name',
    'threatid',
    'time_received',
  ]);
  for (const [name, value] of Object.entries(vars)) assert.equal(value, `$${name}`);

  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /Name: +fw-paris\nStatus: +active/);
  assert.match(human.stdout, /Time zone: +Europe\/Paris/);
  assert.ok(!human.stdout.includes(key));
  const view = JSON.parse(json.stdout) as Record<string, unknown>;
  assert.equal(view.timezone, 'Europe/Paris');
  assert.equal((view.valid_keys as unknown[]).length, 1);
  assert.ok(!json.stdout.includes('sha256:'), 'not even the key hash is shown');
  assert.equal(missing.code, 65);
});
