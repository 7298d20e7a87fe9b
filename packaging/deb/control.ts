// The package's DEBIAN/ directory: control (Depends from what the bundled runtime really links against),
// conffiles, md5sums and the maintainer scripts.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as layout from './layout.js';
import { listFiles, put } from './stage.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const MAINTAINER_SCRIPTS = ['postinst', 'prerm', 'postrm'] as const;

export interface ControlOptions {
  root: string;
  version: string;
  arch: string;
  nodeVersion: string;
}

export function writeControl(options: ControlOptions): Record<string, string> {
  const { root } = options;
  const files = listFiles(root);
  const installedKiB = files.reduce((sum, f) => sum + Math.ceil(statSync(join(root, f)).size / 1024), 0);
  const fields: Record<string, string> = {
    Package: layout.PACKAGE,
    Version: options.version,
    Architecture: options.arch,
    Maintainer: layout.MAINTAINER,
    'Installed-Size': String(installedKiB),
    Depends: sharedLibraryDepends(join(root, layout.NODE_BIN)),
    Suggests: 'nats-server',
    Section: 'net',
    Priority: 'optional',
    Description: [
      'threat-report collector for firewalls and sensors',
      'threatcol receives threat detections that firewalls (PAN-OS HTTP log',
      'forwarding) and custom sensors POST over HTTPS, authenticates each sender by',
      'its sensor name and key, validates the records, derives their criticality',
      'and stores every record durably (fdatasync before the answer) in append-only',
      'NDJSON files or a NATS JetStream cluster.',
      '.',
      'The package runs it as the systemd service threatcol.service under its own',
      'user, with the command line to issue and revoke sensor keys, follow threats',
      'live and send test traffic. It carries its own Node.js runtime',
      `(${options.nodeVersion}) under /usr/lib/threatcol.`,
    ].join('\n '),
  };
  const text = `${Object.entries(fields)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}\n`;
  const debian = join(root, 'DEBIAN');
  mkdirSync(debian, { recursive: true });
  put(root, 'DEBIAN/control', text);
  put(root, 'DEBIAN/conffiles', `${layout.CONFFILE}\n`);
  put(
    root,
    'DEBIAN/md5sums',
    files
      .filter((f) => !f.startsWith('etc/'))
      .map(
        (f) =>
          `${createHash('md5')
            .update(readFileSync(join(root, f)))
            .digest('hex')}  ${f}\n`,
      )
      .join(''),
  );
  for (const script of MAINTAINER_SCRIPTS)
    put(root, `DEBIAN/${script}`, readFileSync(join(HERE, script)), 0o755);
  return fields;
}

/**
 * `libc6 (>= 2.28), libgcc-s1 (>= 3.4), libstdc++6 (>= 9)`: dpkg-shlibdeps reads the runtime's NEEDED entries and
 * the versioned symbols it uses, and maps them to this system's packages (dpkg-dev).
 */
function sharedLibraryDepends(binary: string): string {
  const work = mkdtempSync(join(tmpdir(), 'threatcol-shlibdeps-'));
  try {
    put(
      work,
      'debian/control',
      `Source: ${layout.PACKAGE}\n\nPackage: ${layout.PACKAGE}\nArchitecture: any\n`,
    );
    let out: string;
    try {
      out = execFileSync('dpkg-shlibdeps', ['-O', `-e${binary}`], {
        cwd: work,
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new Error(
          'dpkg-shlibdeps is missing: apt-get install dpkg-dev (it computes Depends from the runtime)',
        );
      }
      throw error;
    }
    const depends = /^shlibs:Depends=(.*)$/m.exec(out)?.[1];
    if (!depends) throw new Error(`dpkg-shlibdeps printed no Depends: ${out}`);
    return depends;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
