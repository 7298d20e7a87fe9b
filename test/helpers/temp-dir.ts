// Fresh temporary directories, removed after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

export function makeTempDir(
  t?: TestContext | { after(fn: () => void): void },
  prefix = 'threatcol-test-',
): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t?.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
