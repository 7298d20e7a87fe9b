// A fresh Debian root (debootstrap, minbase plus systemd) for the live package test, made once per suite and kept
// in a cache directory: later runs boot an overlay on it, so each starts from the same untouched system.
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where the roots are kept between runs (THREATCOL_DEBOOTSTRAP_CACHE overrides). */
export const CACHE_DIR = process.env.THREATCOL_DEBOOTSTRAP_CACHE ?? '/var/cache/threatcol-test/debootstrap';

/** The mirror this machine's apt uses (the only Debian archive it may reach). */
export function debianMirror(): string {
  for (const file of ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const m =
      /^URIs:\s*(\S+\/debian)\s*$/m.exec(text) ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\s/m.exec(text);
    if (m?.[1]) return m[1];
  }
  return 'http://deb.debian.org/debian';
}

/**
 * What the package depends on beyond minbase (the bundled Node 26 links libatomic): the containers have no network,
 * so apt installs the .deb with what the root already holds, as a box that could fetch them would have them.
 */
const PACKAGE_DEPENDENCIES = ['libatomic1'];

/**
 * The root of `suite` (bookworm, trixie), made with debootstrap when not cached yet. No Node in it: the package
 * must bring its own. Returns the path, or throws with debootstrap's own words.
 */
export async function debianRoot(suite: string): Promise<string> {
  const root = join(CACHE_DIR, suite);
  if (existsSync(join(root, 'etc/os-release')) && existsSync(join(root, '.complete'))) {
    await withDependencies(root);
    return withHosts(root);
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${root}.partial`;
  rmSync(partial, { recursive: true, force: true });
  const include = ['systemd', 'systemd-sysv', 'dbus', 'procps', ...PACKAGE_DEPENDENCIES].join(',');
  await run('debootstrap', ['--variant=minbase', `--include=${include}`, suite, partial, debianMirror()], {
    timeout: 1_200_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  await run('touch', [join(partial, '.complete')]);
  rmSync(root, { recursive: true, force: true });
  renameSync(partial, root);
  return withHosts(root);
}

/** A root cached before the package needed PACKAGE_DEPENDENCIES gets them once, from the mirror. */
async function withDependencies(root: string): Promise<void> {
  const missing = PACKAGE_DEPENDENCIES.filter(
    (name) =>
      !readdirSync(join(root, 'var/lib/dpkg/info')).some(
        (f) => f.startsWith(`${name}:`) || f === `${name}.list`,
      ),
  );
  if (missing.length === 0) return;
  await run(
    'systemd-nspawn',
    [
      '-D',
      root,
      '--quiet',
      '--register=no',
      '--keep-unit',
      '/bin/sh',
      '-c',
      `apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${missing.join(' ')}`,
    ],
    { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
  );
}

/** The /etc/hosts the Debian installer writes (debootstrap's minbase has none, so `localhost` would not resolve). */
function withHosts(root: string): string {
  const hosts = join(root, 'etc/hosts');
  if (!existsSync(hosts)) {
    writeFileSync(hosts, '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n');
  }
  return root;
}

/**
 * Runs `script` with /bin/sh in `lower` under a throw-away overlay, with no init: as in a container image without
 * systemd (no /run/systemd/system), which is where a package's maintainer scripts must still succeed.
 */
export async function runWithoutSystemd(
  lower: string,
  binds: Record<string, string>,
  script: string,
): Promise<{ code: number; output: string }> {
  const base = mkdtempSync('/tmp/threatcol-nosystemd-');
  const root = join(base, 'root');
  const mounted: string[] = [];
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1G', 'tmpfs', base]);
    mounted.push(base);
    for (const d of ['upper', 'work', 'root']) mkdirSync(join(base, d));
    const opts = `lowerdir=${lower},upperdir=${join(base, 'upper')},workdir=${join(base, 'work')}`;
    await run('mount', ['-t', 'overlay', 'overlay', '-o', opts, root]);
    mounted.push(root);
    for (const to of Object.values(binds)) mkdirSync(join(root, to), { recursive: true });
    const args = [
      '-D',
      root,
      '--quiet',
      '--private-network',
      '--register=no',
      '--keep-unit',
      ...Object.entries(binds).map(([from, to]) => `--bind-ro=${from}:${to}`),
      '/bin/sh',
      '-c',
      script,
    ];
    try {
      const { stdout, stderr } = await run('systemd-nspawn', args, { timeout: 300_000 });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  } finally {
    for (const dir of mounted.reverse()) await run('umount', [dir]).catch(() => run('umount', ['-l', dir]));
    rmSync(base, { recursive: true, force: true });
  }
}
