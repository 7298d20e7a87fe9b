// Two builds of the same commit give the same package: the same files with the same owners and modes, the same
// contents (md5sums), the same control archive. Compression aside (this build is uncompressed, for speed).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildDebIn, packageUnavailable, sharedDeb } from '../helpers/package-build.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const reason = packageUnavailable();
if (reason) console.log(`# deb-reproducible: skipped: ${reason}`);

const listing = (deb: string) =>
  execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

// Two builds, each about 20 s of CPU on a quiet box, several minutes at load 10: a hang guard, not a speed claim.
test('building the package twice gives the same files, contents and control', {
  skip: reason ?? false,
  timeout: 900_000,
}, async (t) => {
  const dir = makeTempDir(t, 'deb-again');
  // The second build is independent of the shared one (another process, staging directory and time), and runs
  // beside it when no other file has built the shared one yet.
  const [first, again] = await Promise.all([sharedDeb(), buildDebIn(join(dir, 'out'), 'none')]);
  assert.equal(listing(again), listing(first));
  for (const [deb, to] of [
    [first, join(dir, 'a')],
    [again, join(dir, 'b')],
  ] as const) {
    execFileSync('dpkg-deb', ['-e', deb, to]);
  }
  for (const f of ['control', 'md5sums', 'conffiles', 'postinst', 'prerm', 'postrm']) {
    assert.equal(readFileSync(join(dir, 'b', f), 'utf8'), readFileSync(join(dir, 'a', f), 'utf8'), f);
  }
});
