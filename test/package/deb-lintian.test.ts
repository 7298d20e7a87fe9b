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

// lintian reads every file of the package (the bundled runtime is most of its 45 MB): about 50 s of CPU, 2 min on a
// box at load 10. The suite's 3 min would then be no hang guard but a speed claim; 15 min is one.
test('lintian: no errors, no warnings', { skip: reason ?? false, timeout: 900_000 }, async () => {
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
