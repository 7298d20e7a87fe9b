// Where `threatcol send` posts and as whom: the collector's URL and endpoint path, which certificate to trust,
// and the sensor's name and key, from flags, the environment and the configuration.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Trust } from '../client/connection.js';
import { normalizeFingerprint } from '../client/fingerprint.js';
import type { Endpoint } from '../client/sample-records.js';
import { loadConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import { type CliIo, write } from './io.js';

export interface TargetOptions {
  url?: string;
  sensor?: string;
  key?: string;
  keyFile?: string;
  ca?: string;
  fingerprint?: string;
  insecure?: boolean;
  config?: string;
  dataDir?: string;
}

export interface Target {
  /** The collector's base URL as given (for messages and hints). */
  base: URL;
  /** The path posted to, e.g. `/firewall` or `/proxy/prefix/firewall`. */
  path: string;
  trust: Trust;
  sensor: string;
  key: string;
}

/** Reads the target from the options (usage errors first for credentials, as before any URL is read). */
export function resolveTarget(endpoint: Endpoint, options: TargetOptions, io: CliIo): Target {
  const { sensor, key } = credentials(options, io);
  const base = targetUrl(options, io);
  const trust = chooseTrust(options, base, io);
  if (trust.kind === 'insecure') {
    write(io.stderr, "threatcol: warning: --insecure: the collector's certificate is not verified");
  }
  return { base, path: endpointPath(base, endpoint), trust, sensor, key };
}

/**
 * The path to post to: a URL that already ends in the endpoint is used as given; one ending in the other
 * endpoint is refused (it would post to /firewall/generic); any other path is a prefix (a reverse proxy).
 */
function endpointPath(base: URL, endpoint: Endpoint): string {
  const path = base.pathname.replace(/\/+$/, '');
  if (path.endsWith(`/${endpoint}`)) return path;
  const other = endpoint === 'firewall' ? 'generic' : 'firewall';
  if (path.endsWith(`/${other}`)) {
    throw usage(
      `--url ${base.href} ends in /${other} but the endpoint is ${endpoint}: give the collector's base URL (threatcol send adds /${endpoint})`,
    );
  }
  return `${path}/${endpoint}`;
}

const LOCAL_HOSTS = new Set(['localhost', '[::1]', '::1']);

function isLocal(url: URL): boolean {
  return LOCAL_HOSTS.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}

export function chooseTrust(options: TargetOptions, url: URL, io: CliIo): Trust {
  const chosen = [options.ca, options.fingerprint, options.insecure].filter((v) => v !== undefined);
  if (chosen.length > 1) throw usage('use only one of --ca, --fingerprint and --insecure');
  if (options.insecure) return { kind: 'insecure' };
  if (options.fingerprint !== undefined) {
    const sha256 = normalizeFingerprint(options.fingerprint);
    if (!sha256) {
      throw usage(
        `--fingerprint "${options.fingerprint}" is not a SHA-256 fingerprint (64 hex digits, colons optional)`,
      );
    }
    return { kind: 'fingerprint', sha256 };
  }
  if (options.ca !== undefined) {
    return { kind: 'ca', pem: readArgumentFile(options.ca, '--ca'), source: `--ca ${options.ca}` };
  }
  // A collector on this machine: its own self-signed certificate is the one to trust, when we may read it.
  if (isLocal(url)) {
    const { dataDir } = loadConfig({
      configPath: options.config,
      env: io.env,
      overrides: { dataDir: options.dataDir },
    });
    const certPath = join(dataDir, 'tls', 'cert.pem');
    try {
      return { kind: 'ca', pem: readFileSync(certPath, 'utf8'), source: certPath };
    } catch {
      // Not readable or not there (another data directory, a configured certificate): the system CAs.
    }
  }
  return { kind: 'system' };
}

function credentials(options: TargetOptions, io: CliIo): { sensor: string; key: string } {
  if (options.key !== undefined && options.keyFile !== undefined)
    throw usage('use --key or --key-file, not both');
  if (options.keyFile !== undefined) warnIfShared(options.keyFile, io);
  const key =
    options.key ??
    (options.keyFile !== undefined
      ? (readArgumentFile(options.keyFile, '--key-file').split(/\r?\n/)[0] ?? '').trim()
      : io.env.THREATCOL_KEY);
  const sensor = options.sensor ?? io.env.THREATCOL_SENSOR;
  if (!sensor) throw usage('no sensor name: use --sensor NAME or set THREATCOL_SENSOR');
  if (!key) throw usage('no key: use --key-file FILE, set THREATCOL_KEY, or --key KEY');
  return { sensor, key };
}

/** A key file other users can read is a leaked key: say so (it still works). */
function warnIfShared(path: string, io: CliIo): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // reading it reports the problem
  }
  if ((mode & 0o044) !== 0) {
    write(
      io.stderr,
      `threatcol: warning: the key file ${path} is readable by other users (mode ${mode.toString(8).padStart(4, '0')}): chmod 600 ${path}`,
    );
  }
}

function targetUrl(options: TargetOptions, io: CliIo): URL {
  let text = options.url ?? io.env.THREATCOL_URL;
  if (text === undefined || text === '') {
    const { config } = loadConfig({ configPath: options.config, env: io.env });
    text = config.server.port === 443 ? 'https://localhost' : `https://localhost:${config.server.port}`;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usage(`--url "${text}" is not a URL (e.g. https://collector.example.org)`);
  }
  // The key travels in a header: never over plain HTTP, whatever the trust options say.
  if (url.protocol !== 'https:') throw usage(`--url must be https://, not ${url.protocol}`);
  return url;
}

/** A file named on the command line, read whole; INVALID_ARGUMENT naming the flag when it cannot be read. */
export function readArgumentFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `${flag}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

function usage(message: string): ThreatcolError {
  return new ThreatcolError('USAGE', message);
}
