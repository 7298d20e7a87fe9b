// The image's root file system: the Debian package's files as they are, plus what a system around them would give
// (the shared libraries the bundled Node runtime and /bin/sh link against, the service user, an empty data
// directory, /tmp), and the container's configuration in place of the package's conffile.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import * as layout from '../deb/layout.js';
import type { TarEntry } from './tar-writer.js';

/** The user and group the collector runs as: distroless images' `nonroot`, Kubernetes' usual non-root id. */
export const IMAGE_UID = 65532;
export const HTTPS_PORT = 8443;
export const ADMIN_PORT = 9441;

/**
 * The image's configuration file: only what differs from the defaults. The data directory is not in it: the image
 * sets STATE_DIRECTORY (the default of `dataDir`), so a file mounted over this one keeps it.
 */
export function imageConfigText(): string {
  return [
    '// threatcol in a container: the settings of the image, all else at its default. Mount your own file here',
    `// (readable by uid ${IMAGE_UID}) or set THREATCOL_* variables, which take precedence over this file. The data`,
    `// directory is ${layout.DATA_DIR} (STATE_DIRECTORY, a volume). Every key: docs/configuration.md.`,
    '{',
    `  "server": { "port": ${HTTPS_PORT} },`,
    `  "admin": { "listen": "127.0.0.1:${ADMIN_PORT}" }`,
    '}',
    '',
  ].join('\n');
}

const SYSTEM_FILES: Record<string, string> = {
  'etc/passwd': `root:x:0:0:root:/root:/usr/sbin/nologin\nthreatcol:x:${IMAGE_UID}:${IMAGE_UID}:threatcol:/nonexistent:/usr/sbin/nologin\n`,
  'etc/group': `root:x:0:\nthreatcol:x:${IMAGE_UID}:\n`,
  // glibc reads these itself (nss_files and nss_dns are part of libc since 2.34): no NSS modules to carry.
  'etc/nsswitch.conf': 'passwd: files\ngroup: files\nhosts: files dns\n',
};

/**
 * Every entry of the image's root: `packageRoot` (the .deb extracted) with the additions above, its parents
 * listed before it, sorted by path.
 */
export function imageEntries(packageRoot: string): TarEntry[] {
  const entries = new Map<string, TarEntry>();
  const add = (entry: TarEntry) => entries.set(entry.path, entry);
  for (const entry of packageEntries(packageRoot)) add(entry);

  const root = { uid: 0, gid: 0 };
  for (const [path, text] of Object.entries(SYSTEM_FILES))
    add({ path, type: 'file', mode: 0o644, ...root, data: Buffer.from(text) });
  // Read by the collector's group only: the file may hold an admin token or NATS credentials.
  add({
    path: layout.CONFFILE.slice(1),
    type: 'file',
    mode: 0o640,
    uid: 0,
    gid: IMAGE_UID,
    data: Buffer.from(imageConfigText()),
  });
  add({ path: layout.DATA_DIR.slice(1), type: 'directory', mode: 0o700, uid: IMAGE_UID, gid: IMAGE_UID });
  add({ path: 'tmp', type: 'directory', mode: 0o1777, ...root });
  // Mount points a runtime fills; present so a read-only root need not be changed to make them.
  for (const path of ['proc', 'sys', 'dev', 'etc/threatcol/tls'])
    if (!entries.has(path)) add({ path, type: 'directory', mode: 0o755, ...root });

  // /usr/bin/threatcol is a shell script (exec the runtime): a shell, the build machine's /bin/sh.
  const host = hostFiles(join(packageRoot, layout.NODE_BIN), ['/bin/sh']);
  for (const file of host.files) add(file);
  for (const link of mergedUsrLinks(entries)) add(link);
  for (const path of [...entries.keys()])
    for (let dir = posix.dirname(path); dir !== '.'; dir = posix.dirname(dir))
      if (!entries.has(dir)) add({ path: dir, type: 'directory', mode: 0o755, ...root });
  add({
    path: `${layout.DOC_DIR.slice(1)}/image-libraries`,
    type: 'file',
    mode: 0o644,
    ...root,
    data: Buffer.from(host.list),
  });
  return [...entries.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The package's files with their modes, owned by root as dpkg would install them. */
function packageEntries(dir: string, prefix = ''): TarEntry[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((d): TarEntry[] => {
    const path = prefix ? `${prefix}/${d.name}` : d.name;
    const full = join(dir, path);
    const mode = lstatSync(full).mode & 0o7777;
    if (d.isDirectory())
      return [{ path, type: 'directory', mode, uid: 0, gid: 0 }, ...packageEntries(dir, path)];
    if (d.isSymbolicLink())
      return [{ path, type: 'symlink', mode: 0o777, uid: 0, gid: 0, target: readlinkSync(full) }];
    return [{ path, type: 'file', mode, uid: 0, gid: 0, data: readFileSync(full) }];
  });
}

/**
 * The programs' shared libraries (as the build machine's loader resolves them, `ldd`) and the programs from the build
 * machine (/bin/sh), each at its real directory (/usr/lib/... on a merged /usr), and which Debian package each came
 * from: the image carries that package's copyright file and names it in image-libraries.
 */
function hostFiles(runtime: string, programs: string[]): { files: TarEntry[]; list: string } {
  const wanted = new Set<string>(programs);
  for (const program of [runtime, ...programs]) {
    for (const line of execFileSync('ldd', [program], { encoding: 'utf8' }).split('\n')) {
      if (/ => not found/.test(line)) throw new Error(`${program}: ${line.trim()}`);
      const path = / => (\/\S+) \(/.exec(line)?.[1] ?? /^\s*(\/\S+) \(/.exec(line)?.[1];
      if (path) wanted.add(path);
    }
  }
  const files: TarEntry[] = [];
  const rows: string[] = [];
  const packages = new Set<string>();
  for (const path of [...wanted].sort()) {
    const at = join(realpathSync(dirname(path)), basename(path)).slice(1);
    const executable = (statSync(path).mode & 0o111) !== 0;
    files.push({
      path: at,
      type: 'file',
      mode: executable ? 0o755 : 0o644,
      uid: 0,
      gid: 0,
      data: readFileSync(path),
    });
    const owner = debianPackage(path);
    rows.push(`/${at} ${owner ?? '-'}`);
    if (owner) packages.add(owner.split(' ')[0] as string);
  }
  for (const name of [...packages].sort()) {
    const copyright = `/usr/share/doc/${name}/copyright`;
    if (existsSync(copyright))
      files.push({
        path: copyright.slice(1),
        type: 'file',
        mode: 0o644,
        uid: 0,
        gid: 0,
        data: readFileSync(copyright),
      });
  }
  const list = [
    '# Files the image takes from the build machine, with their Debian package and version.',
    ...rows,
    '',
  ].join('\n');
  return { files, list };
}

/** `libc6 2.36-9+deb12u14` for a path dpkg knows (by its own name or its real one), else null. */
function debianPackage(path: string): string | null {
  for (const candidate of [path, realpathSync(path)]) {
    try {
      // `dash: /bin/sh`, after any `diversion by dash from: /bin/sh` lines; `libc6:amd64: /lib/...`.
      const owner = execFileSync('dpkg-query', ['-S', candidate], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .split('\n')
        .find((line) => line !== '' && !line.startsWith('diversion '));
      const name = owner?.split(/[:,]/)[0]?.trim();
      if (!name) continue;
      // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's format, not a template
      const version = execFileSync('dpkg-query', ['-W', '-f', '${Version}', name], {
        encoding: 'utf8',
      }).trim();
      return `${name} ${version}`;
    } catch {
      // Not this name: try the real path.
    }
  }
  return null;
}

/** /bin, /lib, /lib64 as symlinks into /usr, as on the build machine, where the image has files behind them. */
function mergedUsrLinks(entries: Map<string, TarEntry>): TarEntry[] {
  const links: TarEntry[] = [];
  for (const top of ['bin', 'lib', 'lib64', 'sbin']) {
    let target: string;
    try {
      target = readlinkSync(`/${top}`);
    } catch {
      continue; // a real directory on this machine: the files are under it already
    }
    const inside = target.replace(/^\//, '');
    if ([...entries.keys()].some((p) => p.startsWith(`${inside}/`)))
      links.push({ path: top, type: 'symlink', mode: 0o777, uid: 0, gid: 0, target });
  }
  return links;
}
