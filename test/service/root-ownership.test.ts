// Running the CLI (and even serve) as root against the service's data directory keeps every file owned by the
// service user, with the documented modes: registry and key 0600, directories 0700.
import { strict as assert } from 'node:assert';
import { chownSync, lstatSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureDataDir, lookupUser } from '../../src/data-dir/ensure-data-dir.js';
import { addSensorCli, runCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const isRoot = process.getuid?.() === 0;
const skip = isRoot ? false : 'needs root: the point is what root leaves behind';
const UID = 65534;

/** Every path under `dir` (and `dir` itself) with owner and mode. */
function walk(dir: string): { path: string; uid: number; gid: number; mode: number; dir: boolean }[] {
  const st = lstatSync(dir);
  const out = [{ path: dir, uid: st.uid, gid: st.gid, mode: st.mode & 0o777, dir: st.isDirectory() }];
  if (st.isDirectory()) for (const name of readdirSync(dir)) out.push(...walk(join(dir, name)));
  return out;
}

function serviceDir(t: { after(fn: () => void): void }): string {
  const dataDir = join(makeTempDir(t), 'state');
  mkdirSync(dataDir, { mode: 0o700 });
  chownSync(dataDir, UID, UID);
  return dataDir;
}

const expectedMode: Record<string, number> = {
  'sensors.json': 0o600,
  'key.pem': 0o600,
  'cert.pem': 0o644,
  'sensor-stats.json': 0o640,
};

function assertOwnedByService(dataDir: string): string[] {
  const entries = walk(dataDir);
  for (const e of entries) {
    assert.equal(e.uid, UID, `${e.path} is owned by uid ${e.uid}`);
    assert.equal(e.gid, UID, `${e.path} has gid ${e.gid}`);
    const name = e.path.slice(e.path.lastIndexOf('/') + 1);
    if (e.dir) assert.equal(e.mode, 0o700, `${e.path} is ${e.mode.toString(8)}`);
    else if (name.endsWith('.ndjson')) assert.equal(e.mode, 0o640, `${e.path} is ${e.mode.toString(8)}`);
    else assert.equal(e.mode, expectedMode[name], `${e.path} is ${e.mode.toString(8)}`);
  }
  return entries.map((e) => e.path.slice(dataDir.length) || '/');
}

test('root adding and revoking sensors in a directory owned by the service user leaves everything to that user', {
  skip,
}, async (t) => {
  const dataDir = serviceDir(t);
  await addSensorCli(dataDir, 'fw1');
  await addSensorCli(dataDir, 'fw2');
  const revoke = await runCli(['sensor', 'revoke', 'fw2', '--data-dir', dataDir]);
  assert.equal(revoke.code, 0, revoke.stderr);
  // Nothing else is left behind: no lock directory, no temporary file.
  assert.deepEqual(assertOwnedByService(dataDir), ['/', '/sensors.json']);
});

test('root running serve in the service directory creates tls/, threats/, segments and stats as the service user', {
  skip,
}, async (t) => {
  const dataDir = serviceDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir, [], { env: { THREATCOL_STORE_STATS_INTERVAL_MS: '100' } });
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const reply = await post(serve.url, '/generic', genericRecord(), { agent, sensor: 'fw1', key });
  assert.equal(reply.status, 200, reply.text);
  const { code } = await serve.stop();
  assert.equal(code, 0);
  assert.equal(readStored(dataDir).length, 1);
  const paths = assertOwnedByService(dataDir);
  for (const p of ['/tls', '/tls/cert.pem', '/tls/key.pem', '/threats', '/sensor-stats.json']) {
    assert.ok(paths.includes(p), `${p} missing: ${paths.join(', ')}`);
  }
  assert.ok(paths.some((p) => /^\/threats\/\d{8}-\d{6}\.ndjson$/.test(p)));
});

test('a data directory root creates fresh is 0700, its new parents stay traversable, and it goes to the service user', {
  skip,
}, (t) => {
  const base = makeTempDir(t);
  const dataDir = join(base, 'srv', 'threatcol', 'state');
  const owner = ensureDataDir(dataDir, { serviceOwner: () => ({ uid: UID, gid: UID }) });
  assert.deepEqual(owner, { uid: UID, gid: UID });
  const st = statSync(dataDir);
  assert.equal(st.mode & 0o777, 0o700);
  assert.equal(st.uid, UID);
  for (const parent of [join(base, 'srv'), join(base, 'srv', 'threatcol')]) {
    assert.equal(statSync(parent).mode & 0o011, 0o011, `${parent} must be traversable by the service user`);
  }
  // An existing directory is never taken over.
  const existing = makeTempDir(t);
  assert.deepEqual(ensureDataDir(existing, { serviceOwner: () => ({ uid: UID, gid: UID }) }), {
    uid: 0,
    gid: 0,
  });
});

test('the service user is looked up in /etc/passwd by name', (t) => {
  const passwd = join(makeTempDir(t), 'passwd');
  writeFileSync(
    passwd,
    'root:x:0:0:root:/root:/bin/bash\nthreatcol:x:998:997::/var/lib/threatcol:/usr/sbin/nologin\n',
  );
  assert.deepEqual(lookupUser('threatcol', passwd), { uid: 998, gid: 997 });
  assert.equal(lookupUser('nobody-here', passwd), null);
});
