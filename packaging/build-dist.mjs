// Compiles src/ into dist/ so that no reader ever sees a half-written tree, and (with --if-stale) only when needed.
// First it writes src/generated/ (packaging/generate/write-generated.ts): the code rendered from other code,
// which no one commits or edits.
//
// Why both: `npx threatcol` in a checkout installs the checkout into npm's cache as a link, and npm runs the
// linked package's `prepare` every time. A plain `tsc` there rebuilt dist/ in place on each call (6 s) while
// other processes ran bin/threatcol from it. So tsc writes a fresh directory beside dist/, which then replaces
// dist/ by rename (a starting CLI sees the old tree or the new one, never a mix), and `prepare` passes
// --if-stale: nothing happens when dist/ was built from the same sources, generators, tools and tsconfig.
// Plain JavaScript: it runs before anything is compiled, and without tsx's start-up on every npx (the
// generators, TypeScript, run through tsx only when a build is due).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
/** Written last into the new tree: the digest of what it was built from. */
const STAMP = '.sources-digest';
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/**
 * BUILD_NO_TYPECHECK=1 compiles without type checking (tsc --noCheck: the same JavaScript, byte for
 * byte, in half the CPU). The test suite's own builds set it; `npm run typecheck` checks the same sources.
 */
const typeCheckArgs = (env = process.env) => (env.BUILD_NO_TYPECHECK === '1' ? ['--noCheck'] : []);

/** The generators of src/generated/, and the modules whose versions shape what they or the compiler write. */
const GENERATORS = join(ROOT, 'packaging/generate');
const TOOLS = [
  'typescript',
  'ajv',
  'commander',
  '@ip-location-db/asn',
  '@ip-location-db/geo-whois-asn-country-mmdb',
];

const filesUnder = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

/**
 * Every file under src/ (generated ones too: a tree without them is stale) and packaging/generate/,
 * tsconfig.json and the tools' versions, in a fixed order.
 */
export function sourcesDigest() {
  const hash = createHash('sha256');
  const files = [...filesUnder(join(ROOT, 'src')), ...filesUnder(GENERATORS)].sort();
  for (const file of [...files, join(ROOT, 'tsconfig.json')]) {
    hash.update(`${relative(ROOT, file)}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  for (const tool of TOOLS)
    hash.update(
      `${JSON.parse(readFileSync(join(ROOT, 'node_modules', tool, 'package.json'), 'utf8')).version}\0`,
    );
  return hash.digest('hex');
}

/** Writes src/generated/ from the current sources (TypeScript, so through tsx, only when a build is due). */
export function writeGenerated() {
  execFileSync(process.execPath, ['--import', 'tsx', join(GENERATORS, 'write-generated.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

function builtDigest() {
  try {
    return readFileSync(join(DIST, STAMP), 'utf8').trim();
  } catch {
    return null;
  }
}

/** Moves `fresh` to dist/, the old tree aside first; a concurrent build may swap in between, so retry. */
function swapIn(fresh) {
  const old = join(ROOT, `.dist-old-${process.pid}`);
  for (let attempt = 0; ; attempt++) {
    try {
      renameSync(DIST, old);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    try {
      renameSync(fresh, DIST);
      break;
    } catch (error) {
      // Another build put its tree in place between our two renames: move that one aside too.
      if ((error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') || attempt > 10) throw error;
      rmSync(old, { recursive: true, force: true });
    }
  }
  rmSync(old, { recursive: true, force: true });
}

export function buildDist({ ifStale }) {
  if (ifStale && builtDigest() === sourcesDigest()) return false;
  writeGenerated();
  const digest = sourcesDigest();
  const fresh = join(ROOT, `.dist-build-${process.pid}`);
  rmSync(fresh, { recursive: true, force: true });
  try {
    execFileSync(
      process.execPath,
      [TSC, '-p', join(ROOT, 'tsconfig.json'), '--outDir', fresh, ...typeCheckArgs()],
      {
        stdio: 'inherit',
      },
    );
    // The shipped enrichment databases (src/enrich/databases.ts finds them in dist/enrich/).
    execFileSync(
      process.execPath,
      ['--import', 'tsx', join(GENERATORS, 'enrich-data.ts'), join(fresh, 'enrich')],
      { cwd: ROOT, stdio: 'inherit' },
    );
    writeFileSync(join(fresh, STAMP), `${digest}\n`);
    swapIn(fresh);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    buildDist({ ifStale: process.argv.includes('--if-stale') });
  } catch (error) {
    // tsc has printed its diagnostics already; the stack would only hide them.
    if (error.status === undefined) console.error(error);
    process.exitCode = 1;
  }
}
