// The package the package tests inspect: built once per `npm test` by its pretest step (test/tools/prebuild-deb.ts)
// into test/output/package/, so no test file spends its time limit building it; built here when missing (a test
// file run alone).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildResult, buildDeb } from '../../packaging/deb/build.js';

export const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
export const PREBUILT_DIR = join(CHECKOUT, 'test/output/package');

/** Why the package cannot be built here, or null. */
export function packageUnavailable(): string | null {
  for (const tool of ['dpkg-deb', 'dpkg-shlibdeps']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is missing (apt-get install dpkg-dev)`;
    }
  }
  if (!['x64', 'arm64'].includes(process.arch)) return `no package for ${process.arch}`;
  return null;
}

/** gzip, not the release's xz (minutes for 100 MB here): lintian rightly refuses an uncompressed package. */
export function buildPrebuilt(): BuildResult {
  return buildDeb({ checkout: CHECKOUT, outDir: PREBUILT_DIR, compression: 'gzip' });
}

export function prebuiltDeb(): string {
  const find = () =>
    existsSync(PREBUILT_DIR)
      ? readdirSync(PREBUILT_DIR).find((f) => /^threatcol_.*\.deb$/.test(f))
      : undefined;
  const found = find();
  if (found) return join(PREBUILT_DIR, found);
  return buildPrebuilt().path;
}
