// `threatcol send firewall|generic`: posts a payload (inline, file, stdin or --sample) to a collector and prints
// the answer; with --count it is the load generator.
import { readFileSync, statSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import { Argument, type Command } from 'commander';
import type { Trust } from '../client/connection.js';
import { connectionError } from '../client/connection-error.js';
import { normalizeFingerprint } from '../client/fingerprint.js';
import { formatSummary, runLoad } from '../client/load-test.js';
import { type Endpoint, sampleBody } from '../client/sample-records.js';
import { judgeAnswer, requestHeaders, type SendTarget, sendBody } from '../client/send-request.js';
import { loadConfig } from '../config/load-config.js';
import { CATALOGUE, ThreatcolError } from '../errors.js';
import { type CliIo, write, writeJson } from './io.js';

interface SendOptions {
  data?: string;
  sample?: boolean;
  batch?: string;
  url?: string;
  sensor?: string;
  key?: string;
  keyFile?: string;
  ca?: string;
  fingerprint?: string;
  insecure?: boolean;
  count?: string;
  concurrency?: string;
  rate?: string;
  json?: boolean;
  config?: string;
  dataDir?: string;
}

/** Distinct sample bodies cycled through in load mode: enough variety, built once. */
const LOAD_BODY_VARIANTS = 64;

export function registerSend(
  program: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  program
    .command('send')
    .description('send records to a collector and print its answer; --count makes it a load generator')
    .addArgument(new Argument('<endpoint>', 'which endpoint to post to').choices(['firewall', 'generic']))
    .option('--data <json|@file|->', 'the body: inline JSON, @FILE to read a file, or - for standard input')
    .option('--sample', 'send a realistic random record of that kind instead of --data')
    .option('--batch <n>', 'with --sample: send a JSON array of n records per request (1-1000)')
    .option('--url <url>', 'collector base URL (env THREATCOL_URL; default https://localhost:<server.port>)')
    .option('--sensor <name>', 'sensor name, sent as X-SENSOR_NAME (env THREATCOL_SENSOR)')
    .option('--key <key>', 'sensor key, sent as X-AUTH_KEY (env THREATCOL_KEY); visible to other users in ps')
    .option('--key-file <file>', 'read the sensor key from this file (first line)')
    .option('--ca <file>', 'trust this PEM CA certificate instead of the system CAs')
    .option('--fingerprint <sha256>', "pin the collector's certificate by its SHA-256 fingerprint")
    .option('--insecure', 'do not verify the certificate at all (prints a warning)')
    .option('--count <n>', 'load mode: send n requests and print a summary')
    .option('--concurrency <n>', 'load mode: keep-alive connections to use (default 1)')
    .option('--rate <r>', 'load mode: at most r requests per second in all')
    .option('--json', 'print the answer (or the load summary) as one JSON object')
    .option(
      '--config <file>',
      'configuration file, for the default port and data directory (default: /etc/threatcol/config.json)',
    )
    .option(
      '--data-dir <dir>',
      'data directory whose tls/cert.pem is trusted by default for a local URL (default: as for serve)',
    )
    .action((endpoint: Endpoint, options: SendOptions) => run(() => send(endpoint, options, io)));
}

export async function send(endpoint: Endpoint, options: SendOptions, io: CliIo): Promise<number> {
  const loadMode = options.count !== undefined;
  if (!loadMode && (options.concurrency !== undefined || options.rate !== undefined)) {
    throw usage('--concurrency and --rate need --count (load mode)');
  }
  if ((options.data === undefined) === (options.sample !== true)) {
    throw usage('give the body with exactly one of --data JSON|@FILE|- and --sample');
  }
  if (options.batch !== undefined && !options.sample) throw usage('--batch works with --sample only');
  const batch = options.batch === undefined ? undefined : integer(options.batch, '--batch', 1, 1000);
  const count = loadMode ? integer(options.count as string, '--count', 1, 100_000_000) : 1;
  const concurrency = integer(options.concurrency ?? '1', '--concurrency', 1, 10_000);
  const rate = options.rate === undefined ? undefined : positive(options.rate, '--rate');
  const { sensor, key } = credentials(options, io);
  const base = targetUrl(options, io);
  const trust = chooseTrust(options, base, io);
  if (trust.kind === 'insecure') {
    write(io.stderr, "threatcol: warning: --insecure: the collector's certificate is not verified");
  }
  const body = options.data === undefined ? null : await readData(options.data, io);

  // Loaded here, not at start-up: undici costs every other command a noticeable fraction of a second.
  const { createPool } = await import('../client/connection.js');
  const pool = createPool(base.origin, trust, loadMode ? concurrency : 1);
  const target: SendTarget = {
    pool,
    path: endpointPath(base, endpoint),
    headers: requestHeaders(sensor, key),
  };
  try {
    if (loadMode) {
      const variants = body !== null ? 1 : Math.min(LOAD_BODY_VARIANTS, count);
      const bodies = Array.from({ length: variants }, () =>
        Buffer.from(body ?? sampleBody(endpoint, batch), 'utf8'),
      );
      const recordsPerRequest = batch ?? (body !== null ? recordsIn(body) : 1);
      const result = await runLoad({ target, bodies, recordsPerRequest, count, concurrency, rate });
      if (options.json) writeJson(io.stdout, result.summary);
      else write(io.stdout, formatSummary(result.summary));
      if (result.summary.errors > 0) {
        const error = connectionError(result.firstConnectionError, base.href, trust);
        write(
          io.stderr,
          `threatcol: ${error.code}: ${result.summary.errors} requests failed; first: ${error.message}`,
        );
        return error.exitCode;
      }
      const failed = refusedRequests(result.summary.statuses);
      if (failed > 0) {
        const code = result.firstErrorCode ?? 'CONNECTION_FAILED';
        write(io.stderr, `threatcol: ${code}: ${failed} of ${result.summary.requests} requests were refused`);
        return CATALOGUE[code].exit;
      }
      return 0;
    }
    let answer: { status: number; body: string };
    try {
      answer = await sendBody(target, body ?? sampleBody(endpoint, batch));
    } catch (error) {
      throw connectionError(error, base.href, trust);
    }
    if (options.json) {
      writeJson(io.stdout, { status: answer.status, body: parseOrText(answer.body) });
    } else {
      write(io.stdout, `${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd());
      if (answer.body !== '') write(io.stdout, answer.body);
    }
    const verdict = judgeAnswer(answer.status, answer.body);
    if (verdict.code) write(io.stderr, `threatcol: ${verdict.code}: ${verdict.message}`);
    return verdict.exit;
  } finally {
    await pool.destroy();
  }
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

function chooseTrust(options: SendOptions, url: URL, io: CliIo): Trust {
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

function credentials(options: SendOptions, io: CliIo): { sensor: string; key: string } {
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

function targetUrl(options: SendOptions, io: CliIo): URL {
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

async function readData(data: string, io: CliIo): Promise<string> {
  if (data === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks).toString('utf8');
  }
  if (data.startsWith('@')) return readArgumentFile(data.slice(1), '--data');
  return data;
}

function readArgumentFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `${flag}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/** For the load summary's record count when the body is given: an array counts its elements. */
function recordsIn(body: string): number {
  try {
    const parsed: unknown = JSON.parse(body);
    return Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    return 1;
  }
}

/** Requests answered with anything but 2xx. */
function refusedRequests(statuses: Record<string, number>): number {
  let n = 0;
  for (const [status, count] of Object.entries(statuses)) if (!status.startsWith('2')) n += count;
  return n;
}

function parseOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

function integer(text: string, flag: string, min: number, max: number): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw usage(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}

function positive(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw usage(`${flag} must be a positive number`);
  return n;
}

function usage(message: string): ThreatcolError {
  return new ThreatcolError('USAGE', message);
}
