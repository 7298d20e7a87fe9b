// `npm run image`: threatcol-<version>-<arch>.oci.tar, an OCI image made of the Debian package's files (the package
// built as `npm run package` builds it, or one given with --deb), offline: no registry, no base image, no daemon.
//   npm run image -- [--deb FILE] [--out DIR] [--source URL]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildDeb } from '../deb/build.js';
import * as layout from '../deb/layout.js';
import { imageEntries } from './image-root.js';
import { type ImageResult, writeOciArchive } from './oci-layout.js';

export interface ImageOptions {
  checkout: string;
  outDir: string;
  /** The package to make it of; default: one built now from the checkout. */
  deb?: string;
  /** org.opencontainers.image.source; default: package.json's repository, else git's remote `origin`. */
  source?: string;
}

export interface ImageBuild extends ImageResult {
  path: string;
  bytes: number;
  /** The source label, or null when none was known. */
  source: string | null;
}

export function buildImage(options: ImageOptions): ImageBuild {
  const { checkout } = options;
  const work = mkdtempSync(join(tmpdir(), 'threatcol-image-'));
  try {
    const deb = options.deb ?? buildDeb({ checkout, outDir: join(work, 'deb'), compression: 'none' }).path;
    const field = (name: string) => execFileSync('dpkg-deb', ['-f', deb, name], { encoding: 'utf8' }).trim();
    const root = join(work, 'root');
    mkdirSync(root);
    // Modes as the package holds them whatever the umask (-p), owners left to the image (0, or 65532).
    execFileSync('sh', [
      '-c',
      'dpkg-deb --fsys-tarfile "$1" | tar -x -p --no-same-owner -C "$2"',
      'sh',
      deb,
      root,
    ]);
    // The package's files carry its source date (the build clamps every time stamp to it): so does the image.
    const epoch = Math.floor(statSync(join(root, layout.USR_BIN.slice(1))).mtimeMs / 1000);
    const version = field('Version')
      .replace(/^\d+:/, '')
      .replace(/-[^-]+$/, '');
    const arch = field('Architecture');
    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as {
      description: string;
      license: string;
      repository?: string | { url?: string };
    };
    const entries = imageEntries(root);
    mkdirSync(options.outDir, { recursive: true });
    const path = join(options.outDir, `threatcol-${version}-${arch}.oci.tar`);
    const source = options.source ?? sourceUrl(checkout, manifest.repository);
    const result = writeOciArchive(path, {
      version,
      arch,
      epoch,
      description: manifest.description,
      licenses: manifest.license,
      source,
      entries,
    });
    return { ...result, path, bytes: statSync(path).size, source };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function sourceUrl(checkout: string, repository: string | { url?: string } | undefined): string | null {
  const declared = typeof repository === 'string' ? repository : repository?.url;
  if (declared) return declared.replace(/^git\+/, '');
  try {
    return (
      execFileSync('git', ['remote', 'get-url', 'origin'], {
        cwd: checkout,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() || null
    );
  } catch {
    return null;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      deb: { type: 'string' },
      out: { type: 'string', default: '.' },
      source: { type: 'string' },
    },
  });
  const started = Date.now();
  const result = buildImage({
    checkout: fileURLToPath(new URL('../..', import.meta.url)),
    outDir: resolve(values.out),
    ...(values.deb ? { deb: resolve(values.deb) } : {}),
    ...(values.source ? { source: values.source } : {}),
  });
  const mb = (n: number) => `${(n / 1_048_576).toFixed(1)} MiB`;
  console.log(
    `${result.path} (${mb(result.bytes)}; ${mb(result.unpackedBytes)} unpacked) in ${Date.now() - started} ms`,
  );
  console.log(
    `digest ${result.digest}, image id ${result.configDigest.slice(7, 19)}, name ${result.reference}`,
  );
  if (!result.source)
    console.log(
      "no org.opencontainers.image.source label: set package.json's repository or pass --source URL",
    );
  console.log(`load it: podman load -i ${result.path} (or docker load -i)`);
}
