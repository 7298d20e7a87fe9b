// lintian on the package: no errors and no warnings. The overrides, each with its reason, are in
// packaging/deb/lintian-overrides and docs/operations.md. .ci/run installs lintian; without it the test skips.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { packageUnavailable, sharedDeb } from '../helpers/package-build.js';

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

const TAGS = '/usr/share/lintian/tags';
const ASSERTED = new Set(['error', 'warning']);

/**
 * Of `checks`, those whose every tag (in this lintian's own tag descriptions) is below what is asserted on, so
 * leaving them out cannot hide an error or a warning. binaries/spelling greps the bundled runtime's strings for
 * misspellings (info only): a quarter of lintian's time on this package.
 */
function belowAsserted(checks: string[]): string[] {
  const severities = new Map<string, Set<string>>();
  for (const entry of readdirSync(TAGS, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.tag')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    const check = /^Check: (\S+)$/m.exec(text)?.[1];
    const severity = /^Severity: (\S+)$/m.exec(text)?.[1] ?? 'error';
    if (check) severities.set(check, (severities.get(check) ?? new Set()).add(severity));
  }
  return checks.filter((c) => {
    const found = severities.get(c);
    return found !== undefined && ![...found].some((s) => ASSERTED.has(s));
  });
}

// lintian reads every file of the package (the bundled runtime is most of its 45 MB): about 40 s of CPU, 2 min on a
// box at load 10, plus the package build when no other file has made it yet. A hang guard, not a speed claim.
test('lintian: no errors, no warnings', { skip: reason ?? false, timeout: 900_000 }, async () => {
  const deb = await sharedDeb();
  const skipped = belowAsserted(['binaries/spelling']);
  const args = ['--tag-display-limit', '0', ...skipped.flatMap((c) => ['--dont-check-part', c]), deb];
  // lintian exits non-zero when it reports errors; its report is what is asserted on.
  const out = await run('lintian', args, { maxBuffer: 16 * 1024 * 1024 }).then(
    (done) => ({ ...done, code: 0 }),
    (error: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
      code: error.code,
    }),
  );
  const tags = out.stdout.split('\n').filter((l) => /^[EW]: /.test(l));
  assert.deepEqual(tags, [], out.stdout + out.stderr);
  // No tags from a lintian that did not run (an option it does not know: exit 25; it failed: 2) is no pass.
  assert.equal(out.code, 0, out.stderr);
});
