// The Debian package of this checkout for the test files that inspect it, built once per tree: the first file to
// ask builds it (in a child process, so its test's time limit and teardown hold) into a cache under the temporary
// directory, keyed by what the build reads; files asking meanwhile, in other processes, wait on its lock; later
// files and later runs of the same tree take it as it is.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { guard, watched } from './children.js';

export const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const BUILD = join(CHECKOUT, 'packaging/deb/build.ts');
const CACHE = join(tmpdir(), 'threatcol-test-debs');
/** Cached packages nobody asked for in this long are deleted (a run of the suite takes minutes). */
const KEEP_UNUSED_MS = 2 * 3600_000;

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

/**
 * The package as `npm run package -- --compression gzip` builds it, at gzip's fastest level (lintian rightly
 * refuses an uncompressed package; the level changes nothing any test reads, and -9 was 20 s of CPU).
 */
export async function sharedDeb(): Promise<string> {
  mkdirSync(CACHE, { recursive: true });
  const dir = join(CACHE, treeKey());
  const lock = `${dir}.lock`;
  for (;;) {
    const deb = debIn(dir);
    if (deb) {
      try {
        utimesSync(dir, new Date(), new Date()); // in use: not pruned
      } catch {}
      return deb;
    }
    if (takeLock(lock)) {
      const fresh = `${dir}.tmp-${process.pid}`;
      try {
        rmSync(fresh, { recursive: true, force: true });
        if (!debIn(dir)) {
          await buildDebIn(fresh, 'gzip', { DPKG_DEB_COMPRESSOR_LEVEL: '1' });
          moveInto(fresh, dir);
        }
        prune();
      } finally {
        rmSync(fresh, { recursive: true, force: true });
        rmSync(lock, { recursive: true, force: true });
      }
    } else {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * An independent build of the checkout (`npm run package` in a child process) into `outDir`; resolves with the
 * .deb's path. Ended with the test file when its test did not wait for it (timed out).
 */
export function buildDebIn(
  outDir: string,
  compression: 'gzip' | 'none' | 'xz' | 'zstd',
  env: Record<string, string> = {},
): Promise<string> {
  const argv = watched([
    process.execPath,
    '--import',
    'tsx',
    BUILD,
    '--out',
    outDir,
    '--compression',
    compression,
  ]);
  return new Promise((resolve, reject) => {
    // Its own process group: the file's teardown ends tsc and dpkg-deb with it.
    const child: ChildProcess = guard(
      spawn(argv[0] as string, argv.slice(1), {
        cwd: CHECKOUT,
        // Without the type check (tsc --noCheck, the same JavaScript): `npm run typecheck` does it, and it was
        // 6 s of CPU of each build.
        env: { ...process.env, BUILD_NO_TYPECHECK: '1', ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
      }),
      { group: true },
    );
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const deb = debIn(outDir);
      if (code === 0 && deb) resolve(deb);
      else reject(new Error(`the package build failed (${signal ?? code}): ${stderr}`));
    });
  });
}

/** The .deb in `dir`, or null. */
function debIn(dir: string): string | null {
  if (!existsSync(dir)) return null;
  const name = readdirSync(dir).find((f) => /^threatcol_.*\.deb$/.test(f));
  return name === undefined ? null : join(dir, name);
}

/**
 * What the package is built from: the checkout, its commit (whose time dates the package) and every change to it
 * outside test/, untracked files included; the architecture and SOURCE_DATE_EPOCH.
 * Without git (an exported tree): every file outside node_modules, dist and test.
 */
function treeKey(): string {
  const hash = createHash('sha256');
  // The checkout's own path: another clone of the same commit has node_modules of its own, and builds its own.
  hash.update(`${CHECKOUT}\0${process.arch}\0${process.env.SOURCE_DATE_EPOCH ?? ''}\0`);
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: CHECKOUT,
      maxBuffer: 512 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  let files: string[];
  try {
    hash.update(git(['rev-parse', 'HEAD']));
    hash.update(git(['diff', 'HEAD', '--binary', '--', '.', ':(exclude)test']));
    files = git(['ls-files', '-z', '--others', '--exclude-standard', '--', '.', ':(exclude)test'])
      .toString()
      .split('\0')
      .filter(Boolean);
  } catch {
    files = readdirSync(CHECKOUT, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name).slice(CHECKOUT.length + 1))
      .filter((f) => !/^(node_modules|dist|test|\.git)\//.test(f))
      .sort();
  }
  for (const file of files) {
    hash.update(`${file}\0`);
    try {
      hash.update(readFileSync(join(CHECKOUT, file)));
    } catch {
      hash.update('(gone)');
    }
  }
  return hash.digest('hex').slice(0, 20);
}

/** mkdir is atomic: whoever makes the lock builds. A lock whose builder is gone (killed) is taken over. */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    // Being written by a builder that has just made the lock; one that died in between left it without a pid.
    try {
      if (Date.now() - statSync(lock).mtimeMs > 60_000) rmSync(lock, { recursive: true, force: true });
    } catch {}
    return false;
  }
  if (!alive(pid)) {
    rmSync(`${lock.slice(0, -'.lock'.length)}.tmp-${pid}`, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  }
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Two builders of one tree (a lock taken over twice): the first one in wins, the other's build is dropped. */
function moveInto(fresh: string, dir: string): void {
  try {
    renameSync(fresh, dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
  }
}

/** Packages of other trees unused for hours, and what dead builders left. */
function prune(): void {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_UNUSED_MS)
        rmSync(path, { recursive: true, force: true });
    } catch {
      // Pruned by another run meanwhile.
    }
  }
}
