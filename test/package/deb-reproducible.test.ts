// Two builds of the same commit give the same package: the same files with the same owners and modes, the same
// contents (md5sums), the same control archive. Compression aside (this build is uncompressed, for speed).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildDeb } from '../../packaging/deb/build.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { CHECKOUT, packageUnavailable, prebuiltDeb } from './prebuilt.js';

const reason = packageUnavailable();
if (reason) console.log(`# deb-reproducible: skipped: ${reason}`);

const listing = (deb: string) =>
  execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

test('building the package twice gives the same files, contents and control', {
  skip: reason ?? false,
}, (t) => {
  const first = prebuiltDeb();
  const dir = makeTempDir(t, 'deb-again');
  const again = buildDeb({ checkout: CHECKOUT, outDir: join(dir, 'out'), compression: 'none' });
  assert.equal(listing(again.path), listing(first));
  for (const [deb, to] of [
    [first, join(dir, 'a')],
    [again.path, join(dir, 'b')],
  ] as const) {
    execFileSync('dpkg-deb', ['-e', deb, to]);
  }
  for (const f of ['control', 'md5sums', 'conffiles', 'postinst', 'prerm', 'postrm']) {
    assert.equal(readFileSync(join(dir, 'b', f), 'utf8'), readFileSync(join(dir, 'a', f), 'utf8'), f);
  }
});
