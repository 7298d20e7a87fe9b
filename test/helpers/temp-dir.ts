// Fresh temporary directories, removed when the test file's process exits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

const made = new Set<string>();
process.once('exit', () => {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Left in the temporary directory: nothing of the test's outcome depends on it.
    }
  }
});

/**
 * A directory of the test's own. Not removed by an after() hook: those run in the order they were added, so
 * one added here ran before the test's own "stop the server" hooks, and each collector then stopped with its
 * data directory gone, its stop waiting on writes that failed (12 s each, most of some tests' time). Removed
 * once the file's tests, and their hooks, are all done. `t` names the test it belongs to.
 */
export function makeTempDir(
  _t?: TestContext | { after(fn: () => void): void },
  prefix = 'threatcol-test-',
): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}
