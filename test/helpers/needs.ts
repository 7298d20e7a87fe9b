// What a test needs of the machine beyond `npm ci`: the Debian packages of .ci/debian-packages (the one list, which
// .ci/run installs from). A test whose package is missing is skipped with the reason on a developer's box; under
// .ci/run (THREATCOL_TEST_EVERYTHING=1) nothing is skipped for a package: the test runs, and fails without it,
// and test/_unit.test.ts names every package missing at once. What no package gives is never strict: a mount or
// network namespace is asked here (namespaceUnavailable), root and /dev/fuse by the tests that need them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const LIST = fileURLToPath(new URL('../../.ci/debian-packages', import.meta.url));

/** Under .ci/run: every package must be here. */
export const EVERYTHING = process.env.THREATCOL_TEST_EVERYTHING === '1';

export interface DebianPackage {
  readonly name: string;
  /** The command that shows it is installed, or null (then `dpkg -s` asks for the package). */
  readonly command: string | null;
}

/** The list, read once: a line's package, then its command unless the line goes on with a comment or ends. */
export const DEBIAN_PACKAGES: readonly DebianPackage[] = readFileSync(LIST, 'utf8')
  .split('\n')
  .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
  .filter(([name]) => name !== '')
  .map(([name, command]) => ({ name: name as string, command: command ?? null }));

const installed = new Map<string, boolean>();

/** Whether `name` (a package of the list) is installed. */
export function isInstalled(name: string): boolean {
  let known = installed.get(name);
  if (known === undefined) {
    const entry = DEBIAN_PACKAGES.find((p) => p.name === name);
    if (!entry) throw new Error(`${name} is not in .ci/debian-packages: add it there (with why)`);
    known =
      entry.command !== null
        ? // sbin too: an ordinary user's PATH lacks it, where Debian puts nats-server and nft.
          spawnSync('sh', ['-c', 'PATH="$PATH:/usr/sbin:/sbin" command -v "$1"', 'sh', entry.command], {
            stdio: 'ignore',
          }).status === 0
        : spawnSync('dpkg', ['-s', name], { stdio: 'ignore' }).status === 0;
    installed.set(name, known);
  }
  return known;
}

/**
 * A test's `skip` for the packages it drives: false when all are installed (or under .ci/run, where it must run),
 * else the reason, naming the first one missing.
 */
export function needs(...names: string[]): string | false {
  for (const name of names) {
    if (!isInstalled(name) && !EVERYTHING)
      return `${name} is not installed (apt-get install ${name}; .ci/run does)`;
  }
  return false;
}

const refused = new Map<string, string | false>();

/**
 * Why this machine cannot give a test a namespace of this kind of its own (`unshare --mount` or `--net`), or
 * false: root, and a kernel and container that allow it. No package gives either, so this is never strict.
 */
export function namespaceUnavailable(kind: 'mount' | 'net'): string | false {
  let why = refused.get(kind);
  if (why === undefined) {
    why =
      process.getuid?.() !== 0
        ? `needs root (a ${kind} namespace of its own)`
        : spawnSync('unshare', [`--${kind}`, 'true'], { stdio: 'ignore' }).status !== 0
          ? `this machine refuses a ${kind} namespace (unshare --${kind})`
          : false;
    refused.set(kind, why);
  }
  return why;
}
