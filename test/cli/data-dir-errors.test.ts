// Errors that name the right cause: permissions (PERMISSION_DENIED 77), a data directory that does not exist
// (NO_DATA_DIR 66), and a non-root admin about to write a registry the service never reads.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { addSensorCli, runCli } from '../helpers/cli.js';
import { namespaceUnavailable } from '../helpers/needs.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

test('a data directory this user cannot read or write is PERMISSION_DENIED, never corrupt, locked or INTERNAL', {
  skip: isRoot ? false : 'needs root to run the CLI as another user',
}, async (t) => {
  const base = makeTempDir(t);
  chmodSync(base, 0o755);
  const dir = join(base, 'data');
  await addSensorCli(dir, 'fw'); // created by root, mode 0700: what the service user's directory looks like to others
  /** A command's run time in ms, and its result. */
  const timed = async (run: () => ReturnType<typeof runCli>) => {
    const started = Date.now();
    const r = await run();
    return { r, ms: Date.now() - started };
  };
  for (const args of [
    ['sensor', 'list'],
    ['sensor', 'show', 'fw'],
    ['sensor', 'add', 'fw2'],
    ['sensor', 'rotate', 'fw'],
    ['sensor', 'set', 'fw', '--description', 'x'],
    ['threats', 'tail', '--no-follow'],
    ['threats', 'stats'],
    ['serve', '--host', '127.0.0.1', '--port', '0'],
  ]) {
    // The reference for "at once": a command that reads the registry, run at the same time (so under the same
    // load: a busy box slows both).
    const [reference, { r, ms: tookMs }] = await Promise.all([
      timed(() => runCli(['sensor', 'list', '--data-dir', dir])),
      timed(() => runCli([...args, '--data-dir', dir], { uid: NOBODY, env: { HOME: base } })),
    ]);
    assert.equal(reference.r.code, 0);
    const referenceMs = reference.ms;
    const label = args.join(' ');
    assert.equal(r.code, 77, `${label}: ${r.stderr}`);
    assert.match(r.stderr, /^threatcol: PERMISSION_DENIED: cannot .*\/data\b/, label);
    assert.match(r.stderr, /sudo -u threatcol/, label);
    assert.doesNotMatch(r.stderr, /INTERNAL|REGISTRY_(CORRUPT|LOCKED)|\n\s+at /, label);
    // The lock used to retry EACCES for ~20 s before saying "locked": far beyond a few reference runs.
    assert.ok(tookMs < 4 * referenceMs + 3000, `${label} took ${tookMs} ms (reference ${referenceMs} ms)`);
  }
});

test('read and change commands on a data directory that does not exist fail with NO_DATA_DIR', async (t) => {
  const base = makeTempDir(t);
  const typo = join(base, 'dtaa');
  for (const args of [
    ['sensor', 'list'],
    ['sensor', 'show', 'fw'],
    ['sensor', 'revoke', 'fw'],
    ['sensor', 'rotate', 'fw'],
    ['sensor', 'set', 'fw', '--description', 'x'],
    ['sensor', 'delete', 'fw', '--yes'],
    ['threats', 'tail', '--no-follow'],
    ['threats', 'stats'],
  ]) {
    const label = args.join(' ');
    const r = await runCli([...args, '--data-dir', typo]);
    assert.equal(r.code, 66, `${label}: ${r.stderr}`);
    assert.ok(
      r.stderr.startsWith(
        `threatcol: NO_DATA_DIR: the data directory ${typo} does not exist (from --data-dir`,
      ),
      label,
    );
    assert.match(r.stderr, /\/var\/lib\/threatcol for root, else ~\/\.local\/state\/threatcol/, label);
    assert.equal(r.stdout, '', label);
  }
  const fromEnv = await runCli(['sensor', 'list'], { env: { THREATCOL_DATA_DIR: typo } });
  assert.equal(fromEnv.code, 66);
  assert.match(fromEnv.stderr, /from THREATCOL_DATA_DIR/);
  // add still creates a fresh data directory: that is how an installation starts.
  await addSensorCli(typo, 'fw');
  const listed = await runCli(['sensor', 'list', '--data-dir', typo]);
  assert.equal(listed.code, 0, `sensor list after add: ${listed.stderr}`);
});

test('a non-root sensor add warns when the service has its registry in /var/lib/threatcol', {
  // A mount namespace puts a service registry at /var/lib/threatcol.
  skip: namespaceUnavailable('mount'),
}, async (t) => {
  // A private mount namespace: /var/lib is a temp dir holding a root-only threatcol/sensors.json, as on a
  // box where the service runs; the real /var/lib is not touched.
  const fakeVarLib = makeTempDir(t);
  chmodSync(fakeVarLib, 0o755);
  mkdirSync(join(fakeVarLib, 'threatcol'), { mode: 0o700 });
  writeFileSync(join(fakeVarLib, 'threatcol', 'sensors.json'), '{"version":1,"sensors":[]}\n');
  const home = makeTempDir(t);
  chmodSync(home, 0o777);
  const mine = join(home, 'state');
  const prefix = ['unshare', '--mount', 'sh', '-c', `mount --bind ${fakeVarLib} /var/lib && exec "$@"`, 'sh'];
  const asNobody = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
  const r = await runCli(['sensor', 'add', 'fw', '--data-dir', mine], { prefix: [...prefix, ...asNobody] });
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /^threatcol: warning: creating a new sensor registry in .*state, but the service's registry is \/var\/lib\/threatcol\/sensors\.json/,
  );
  assert.match(r.stderr, /sudo -u threatcol threatcol sensor add/);
  assert.ok(r.stdout.includes(`Data directory: ${mine}`));
  // The second sensor joins the registry this user now has: no warning any more.
  const again = await runCli(['sensor', 'add', 'fw2', '--data-dir', mine], {
    prefix: [...prefix, ...asNobody],
  });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, '');
  // Without a service registry there is nothing to warn about.
  const emptyVarLib = makeTempDir(t);
  chmodSync(emptyVarLib, 0o755);
  const bindEmpty = [
    'unshare',
    '--mount',
    'sh',
    '-c',
    `mount --bind ${emptyVarLib} /var/lib && exec "$@"`,
    'sh',
  ];
  const plain = await runCli(['sensor', 'add', 'fw', '--data-dir', join(home, 'other')], {
    prefix: [...bindEmpty, ...asNobody],
  });
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stderr, '');
});
