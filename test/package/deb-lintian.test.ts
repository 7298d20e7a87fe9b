// lintian on the package: no errors and no warnings. The overrides, each with its reason, are in
// packaging/deb/lintian-overrides and docs/operations.md. .ci/run installs lintian; without it the test skips.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { packageUnavailable, prebuiltDeb } from './prebuilt.js';

const run = promisify(execFile);
const reason =
  packageUnavailable() ??
  (() => {
    try {
      execFileSync('sh', ['-c', 'command -v lintian'], { stdio: 'ignore' });
      return null;
    } catch {
      return 'lintian is not installed (apt-get install lintian; .ci/run does)';
    }
  })();
if (reason) console.log(`# deb-lintian: skipped: ${reason}`);

test('lintian: no errors, no warnings', { skip: reason ?? false }, async () => {
  const deb = prebuiltDeb();
  // lintian exits non-zero when it reports errors; its report is what is asserted on.
  const out = await run('lintian', ['--tag-display-limit', '0', deb], { maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
  const tags = out.stdout.split('\n').filter((l) => /^[EW]: /.test(l));
  assert.deepEqual(tags, [], out.stdout + out.stderr);
});
