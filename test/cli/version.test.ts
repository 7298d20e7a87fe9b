// `threatcol --version [--json]`: the version of package.json (the one npm and the Debian package read), the
// Node.js runtime running it and the store format, from the real binary.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { STORE_FORMAT_VERSION } from '../../src/store/store-format.js';
import { runCli } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

test('--version prints threatcol, Node.js and store format versions, first line "threatcol X.Y.Z"', async () => {
  // -v and `threatcol version` are what people type first: the same answer, not a usage error.
  for (const flag of [['--version'], ['-V'], ['-v'], ['version']]) {
    const r = await runCli(flag);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      `threatcol ${pkg.version}\nNode.js ${process.version}\nstore format ${STORE_FORMAT_VERSION}\n`,
    );
    assert.equal(r.stderr, '');
  }
});

test('--version --json prints one JSON document, in either order of the flags', async () => {
  for (const args of [
    ['--version', '--json'],
    ['--json', '--version'],
    ['version', '--json'],
  ]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      threatcol: pkg.version,
      node: process.version,
      storeFormat: STORE_FORMAT_VERSION,
    });
    assert.match(r.stdout, /^\{\n {2}"threatcol"/);
  }
  // A subcommand's --json stays the subcommand's: only a line of version flags is the version request.
  const usage = await runCli(['--json']);
  assert.equal(usage.code, 64);
});
