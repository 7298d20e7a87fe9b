// Lays out the package's file tree in a staging directory: the bundled Node runtime, the compiled code with its
// production modules only, the units, the conffile, the man pages and completions, and the documentation.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeEnrichData } from '../generate/enrich-data.js';
import { writeGenerated } from '../generate/write-generated.js';
import { RUNTIME_PACKAGES } from '../runtime.js';
import * as layout from './layout.js';

export interface StageOptions {
  /** The checkout: package.json, bin/, dist/ (compiled), web/, node_modules/ (installed by npm ci). */
  checkout: string;
  /** The staging root (becomes `/`). */
  root: string;
  version: string;
  /** The Node binary to bundle: the pinned runtime package's bin/node (its LICENSE beside bin/). */
  nodeBinary: string;
  /** Its version, `v26.12.1`. */
  nodeVersion: string;
  /** SOURCE_DATE_EPOCH, for the changelog's date. */
  epoch: number;
}

/** Writes `text` (or copies `from`) to `root` + `path`, creating parents, with `mode`. */
function put(root: string, path: string, text: string | Buffer, mode = 0o644): void {
  const target = join(root, path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  chmodSync(target, mode);
}

/** gzip -9n: no name, no time stamp, so two builds give the same bytes (Debian policy 12.3 for man pages). */
export const gzipDeterministic = (data: string | Buffer): Buffer => gzipSync(data, { level: 9 });

export function stageRuntime(options: StageOptions): void {
  const { root, nodeBinary } = options;
  const target = join(root, layout.NODE_BIN);
  mkdirSync(dirname(target), { recursive: true });
  // Stripped: symbols are 33 MB of Node 26's 150 MB binary (12 of 99 for Node 20); nothing at run time reads them.
  try {
    execFileSync('strip', ['--strip-unneeded', '-o', target, nodeBinary], { stdio: 'pipe' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    copyFileSync(nodeBinary, target); // no binutils: ship it unstripped (lintian warns)
  }
  chmodSync(target, 0o755);
}

export function stageApp(options: StageOptions): void {
  const { checkout, root } = options;
  const lib = join(root, layout.LIB_DIR);
  // The entry point is run by /usr/bin/threatcol on the bundled runtime, never by a `node` found on PATH: no #!.
  const entry = readFileSync(join(checkout, 'bin/threatcol'), 'utf8').replace(
    /^#!.*\n/,
    `// Run by ${layout.USR_BIN} on ${layout.NODE_BIN}.\n`,
  );
  put(root, layout.APP_BIN, entry, 0o644);
  // A fresh compile of src/ (dist/ in the checkout may hold files of modules since moved or deleted), without
  // source maps: they point at src/, which the package does not carry; its generated code first, as the build does.
  writeGenerated();
  execFileSync(
    process.execPath,
    [
      join(checkout, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(checkout, 'tsconfig.json'),
      '--outDir',
      join(lib, 'dist'),
      '--sourceMap',
      'false',
      // The test suite's builds skip the type check (the same JavaScript): build-dist.mjs, typeCheckArgs.
      ...(process.env.BUILD_NO_TYPECHECK === '1' ? ['--noCheck'] : []),
    ],
    { stdio: 'inherit' },
  );
  // The shipped enrichment databases, where src/enrich/databases.ts looks for them (as `npm run build` writes them).
  writeEnrichData(join(lib, 'dist/enrich'));
  cpSync(join(checkout, 'web'), join(lib, 'web'), { recursive: true });
  // `systemd-unit` renders its units from these; package.json gives `type: module` and the version.
  cpSync(join(checkout, 'systemd'), join(lib, 'systemd'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  // `threatcol --version` says the upstream version: the Debian one without its revision (0.1.1-1 -> 0.1.1).
  const upstream = options.version.replace(/^\d+:/, '').replace(/-[^-]+$/, '');
  put(
    root,
    `${layout.LIB_DIR}/package.json`,
    `${JSON.stringify({ ...manifest, version: upstream }, null, 2)}\n`,
  );
  for (const dir of productionModules(checkout)) {
    const from = join(checkout, dir);
    const programs = modulePrograms(from);
    cpSync(from, join(lib, dir), {
      recursive: true,
      // Nested node_modules are entries of their own in the lockfile (and may be dev-only).
      filter: (src) => {
        const inner = relative(from, src);
        return !inner.startsWith('node_modules') && !programs.has(inner) && !isDevelopmentFile(basename(src));
      },
    });
  }
  // Nothing in a module is run as a program (the package ships no node_modules/.bin): no executable bits.
  chmodTree(join(lib, 'node_modules'));
  put(
    root,
    layout.USR_BIN,
    [
      '#!/bin/sh',
      '# threatcol: the collector and its command line, on the Node runtime bundled with the package.',
      `exec ${layout.NODE_BIN} ${layout.APP_BIN} "$@"`,
      '',
    ].join('\n'),
    0o755,
  );
}

/**
 * The lockfile's non-dev packages but the runtime (`node_modules/a`, `node_modules/a/node_modules/b`), read from what `npm ci`
 * installed: no registry, no cache, the exact versions the tests ran against.
 */
export function productionModules(checkout: string): string[] {
  const lock = JSON.parse(readFileSync(join(checkout, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean; optional?: boolean; link?: boolean }>;
  };
  // The runtime packages are not modules: the one for this machine is bundled as bin/node (stageRuntime).
  const runtimes = new Set(Object.values(RUNTIME_PACKAGES).map((name) => `node_modules/${name}`));
  return Object.entries(lock.packages)
    .filter(
      ([path, entry]) =>
        path !== '' && !entry.dev && !entry.devOptional && !entry.link && !runtimes.has(path),
    )
    .map(([path]) => path)
    .sort();
}

/**
 * What a module's author kept for developing it, not for running it: dot files (VCS, lint and npm configuration),
 * release scripts, tests, benchmarks, examples and the documentation site pino ships as index.html. Licences and
 * READMEs stay.
 */
function isDevelopmentFile(name: string): boolean {
  return (
    name.startsWith('.') ||
    name.endsWith('.sh') ||
    /^(test|tests|__tests__|benchmarks?|examples?|docs|index\.html)$/.test(name) ||
    // Type declarations, source maps, TypeScript sources and read-mes: nothing Node runs (about 5 MB). Licence
    // and notice texts stay, whatever their extension.
    (/\.(d\.[cm]?ts|[cm]?ts|map|md|markdown)$/i.test(name) && !/^(licen[cs]e|copying|notice)/i.test(name))
  );
}

/** A module's own command-line programs (package.json `bin`): threatcol runs none of them (pino's, pino-pretty's). */
function modulePrograms(dir: string): Set<string> {
  const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const paths = bin === undefined ? [] : typeof bin === 'string' ? [bin] : Object.values(bin);
  return new Set(paths.map((p) => p.replace(/^\.\//, '')));
}

function chmodTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chmodTree(path);
    else if (entry.isFile()) chmodSync(path, 0o644);
  }
}

/** Every file under `dir`, relative to it, sorted. */
export function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      return entry.isDirectory() ? listFiles(dir, path) : [path];
    });
}

export { put };
