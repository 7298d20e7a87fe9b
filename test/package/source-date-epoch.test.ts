// `npm run package` from an exported tree (a release tarball, `git archive`): no .git, so the build dates the
// package by package.json, quietly; git's "fatal: not a git repository" must not reach the builder's terminal.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '../helpers/temp-dir.js';

const BUILD = fileURLToPath(new URL('../../packaging/deb/build.ts', import.meta.url));

test('an exported tree without .git is dated by package.json, and git says nothing', (t) => {
  const tree = makeTempDir(t);
  writeFileSync(join(tree, 'package.json'), '{"version":"0.1.0"}');
  utimesSync(join(tree, 'package.json'), 1_700_000_000, 1_700_000_000);
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_CEILING_DIRECTORIES: tree };
  delete env.SOURCE_DATE_EPOCH;
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { sourceDateEpoch } = await import(${JSON.stringify(BUILD)}); console.log(sourceDateEpoch(${JSON.stringify(tree)}));`,
    ],
    { encoding: 'utf8', env, cwd: fileURLToPath(new URL('../..', import.meta.url)) },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '1700000000');
  assert.equal(r.stderr, '');
});
