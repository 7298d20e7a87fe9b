// The command line's compile cache: a command keeps its compiled code in the user's cache directory (never in the
// package), a second run uses it, and a directory it cannot write costs nothing but the cache.
import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { compileCacheDirectory, serveCompileCacheDirectory } from '../../src/cli/compile-cache.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Every file under `dir`, relative. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

test('where the cache lives: the unit cache directory, XDG_CACHE_HOME, ~/.cache, else none', () => {
  assert.equal(
    compileCacheDirectory({ CACHE_DIRECTORY: '/var/cache/threatcol', HOME: '/root' }),
    '/var/cache/threatcol/compile-cache',
  );
  assert.equal(compileCacheDirectory({ XDG_CACHE_HOME: '/x/cache', HOME: '/root' }), '/x/cache/threatcol');
  assert.equal(compileCacheDirectory({ HOME: '/home/ann' }), '/home/ann/.cache/threatcol');
  // A relative XDG_CACHE_HOME is invalid by the spec; no home, or /, is no cache.
  assert.equal(
    compileCacheDirectory({ XDG_CACHE_HOME: 'cache', HOME: '/home/ann' }),
    '/home/ann/.cache/threatcol',
  );
  assert.equal(compileCacheDirectory({}), null);
  assert.equal(compileCacheDirectory({ HOME: '/' }), null);
});

test('sensor list fills the cache under HOME and reads it the next time', async (t) => {
  const dir = makeTempDir(t);
  const home = join(dir, 'home');
  mkdirSync(home);
  const env = { HOME: home, XDG_CACHE_HOME: '' };
  const add = await runCli(['sensor', 'add', 'fw1', '--data-dir', join(dir, 'data')], { env });
  assert.equal(add.code, 0, add.stderr);
  const first = await runCli(['sensor', 'list', '--data-dir', join(dir, 'data')], { env });
  assert.equal(first.code, 0, first.stderr);
  const cached = files(join(home, '.cache', 'threatcol'));
  assert.ok(cached.length > 0, 'compiled modules are cached');
  assert.ok(cached[0]?.startsWith(`${process.version}-`), `keyed by the runtime: ${cached[0]}`);
  const again = await runCli(['sensor', 'list', '--data-dir', join(dir, 'data')], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, first.stdout);
});

test('a cache directory that cannot be written changes nothing but the cache', async (t) => {
  const dir = makeTempDir(t);
  const cache = join(dir, 'cache');
  mkdirSync(cache);
  chmodSync(cache, 0o500);
  const uid = process.getuid?.() === 0 ? 65534 : undefined;
  chmodSync(dir, 0o755);
  const r = await runCli(['--version'], {
    env: { XDG_CACHE_HOME: cache },
    ...(uid === undefined ? {} : { uid }),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /^threatcol /);
  assert.deepEqual(files(cache), []);
});

test('serve keeps its compiled code too, except under a systemd unit with no CacheDirectory=', async (t) => {
  // A start to listening is ~60 ms of CPU less with the cache (the suite starts serve hundreds of times). Under
  // the packaged unit HOME is the data directory: no cache there.
  assert.equal(serveCompileCacheDirectory({ HOME: '/home/ann' }), '/home/ann/.cache/threatcol');
  assert.equal(serveCompileCacheDirectory({ INVOCATION_ID: 'f00', HOME: '/var/lib/threatcol' }), null);
  assert.equal(
    serveCompileCacheDirectory({ INVOCATION_ID: 'f00', CACHE_DIRECTORY: '/var/cache/threatcol', HOME: '/x' }),
    '/var/cache/threatcol/compile-cache',
  );
  for (const unit of [false, true]) {
    const dir = makeTempDir(t);
    const home = join(dir, 'home');
    mkdirSync(home);
    const serve = await spawnServe(join(dir, 'data'), [], {
      env: { HOME: home, XDG_CACHE_HOME: '', ...(unit ? { INVOCATION_ID: '0123456789abcdef' } : {}) },
    });
    t.after(() => serve.stop());
    assert.deepEqual(await serve.stop(), { code: 0, signal: null });
    const cached = files(join(home, '.cache', 'threatcol'));
    if (unit) assert.deepEqual(cached, []);
    else
      assert.ok(
        cached.some((f) => f.startsWith(`${process.version}-`)),
        `cached: ${cached.length} files`,
      );
  }
});
