// `threatcol --version [--json]`: the threatcol version (package-version.ts), the Node.js runtime's and the
// store format's.
import { threatcolVersion } from '../package-version.js';
import { STORE_FORMAT_VERSION } from '../store/store-format.js';

export interface Versions {
  threatcol: string;
  node: string;
  storeFormat: number;
}

export function readVersions(): Versions {
  return { threatcol: threatcolVersion(), node: process.version, storeFormat: STORE_FORMAT_VERSION };
}

/** First line `threatcol X.Y.Z`, as scripts that read only the first line expect. */
export function versionText(v: Versions): string {
  return `threatcol ${v.threatcol}\nNode.js ${v.node}\nstore format ${v.storeFormat}`;
}

const VERSION_WORDS = new Set(['--version', '-V', '-v']);

/**
 * `threatcol --version` and `--version --json` (either order), also spelt `-v` and `threatcol version`, as
 * people type them: answered before commander parses, because a root `--json` option would also capture every
 * subcommand's `--json` (commander reads root options anywhere).
 */
export function isVersionRequest(argv: readonly string[]): { json: boolean } | null {
  const args = argv[0] === 'version' ? ['--version', ...argv.slice(1)] : argv;
  const flags = new Set(args);
  if (![...flags].some((a) => VERSION_WORDS.has(a))) return null;
  if (![...flags].every((a) => VERSION_WORDS.has(a) || a === '--json')) return null;
  return { json: flags.has('--json') };
}
