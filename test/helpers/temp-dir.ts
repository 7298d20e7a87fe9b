// Fresh temporary directories, removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** Directories a process was still writing into at the test's end: removed when the test file exits. */
const leftOver = new Set<string>();
process.once('exit', () => {
  for (const dir of leftOver) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

export function makeTempDir(
  t?: TestContext | { after(fn: () => void): void },
  prefix = 'threatcol-test-',
): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // after() hooks run in the order they were added, so this one runs before the test's own "stop the
  // server" hooks: a collector still writing (stats every 100 ms) can refill the directory while it is
  // removed. A failed removal must not fail the test (and skip the hooks that stop the server): it is done
  // again when the file's process exits.
  t?.after(() => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      leftOver.add(dir);
    }
  });
  return dir;
}
