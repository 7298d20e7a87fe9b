// What `threatcol send` does once chosen: posts a payload (inline, file, stdin or --sample) to a collector and
// prints the answer, or with --count runs the load generator (the loop is src/client/load-test.ts, the target and
// credentials send-target.ts). Apart from send.ts (the definition) so that only `send` loads undici and the rest.
import { connectionError } from '../client/connection-error.js';
import { distinctBodies, type LoadBodies, repeatedBodies } from '../client/load-bodies.js';
import { formatSummary, runLoad } from '../client/load-test.js';
import { type Endpoint, sampleBody } from '../client/sample-records.js';
import { judgeAnswer, requestHeaders, type SendTarget, sendBody } from '../client/send-request.js';
import { CATALOGUE, ThreatcolError } from '../errors.js';
import { nodeHttp } from '../node-http.js';
import { type CliIo, write, writeJson } from './io.js';
import { refuseFlags, SYSLOG_ONLY_FLAGS } from './send-flags.js';
import { readArgumentFile, resolveTarget, type Target, type TargetOptions } from './send-target.js';

const { STATUS_CODES } = nodeHttp;

export interface SendOptions extends TargetOptions {
  data?: string;
  sample?: boolean;
  batch?: string;
  count?: string;
  repeat?: boolean;
  concurrency?: string;
  rate?: string;
  json?: boolean;
}

interface LoadPlan {
  count: number;
  concurrency: number;
  rate: number | undefined;
  bodies: LoadBodies;
}

export async function send(endpoint: Endpoint, options: SendOptions, io: CliIo): Promise<number> {
  // Said, not ignored: a user who meant `send syslog` would otherwise post HTTPS records thinking they went by syslog.
  refuseFlags(options, SYSLOG_ONLY_FLAGS, 'send syslog', `send ${endpoint}`);
  const loadMode = options.count !== undefined;
  if (!loadMode && (options.concurrency !== undefined || options.rate !== undefined || options.repeat)) {
    throw usage('--concurrency, --rate and --repeat need --count (load mode)');
  }
  if ((options.data === undefined) === (options.sample !== true)) {
    throw usage('give the body with exactly one of --data JSON|@FILE|- and --sample');
  }
  if (options.batch !== undefined && !options.sample) throw usage('--batch works with --sample only');
  if (loadMode && options.data !== undefined && !options.repeat) {
    throw usage(
      '--data sends the same body every time: add --repeat to load-test with it (the collector answers the repeats as duplicates), or use --sample for distinct records',
    );
  }
  const batch = options.batch === undefined ? undefined : integer(options.batch, '--batch', 1, 1000);
  const count = loadMode ? integer(options.count as string, '--count', 1, 100_000_000) : 1;
  const concurrency = integer(options.concurrency ?? '1', '--concurrency', 1, 10_000);
  const rate = options.rate === undefined ? undefined : positive(options.rate, '--rate');
  const target = resolveTarget(endpoint, options, io);
  const given = options.data === undefined ? undefined : await readData(options.data, io);

  // Loaded here, not at start-up: undici costs every other command a noticeable fraction of a second.
  const { createPool } = await import('../client/connection.js');
  const pool = createPool(target.base.origin, target.trust, loadMode ? concurrency : 1);
  const sendTarget: SendTarget = {
    pool,
    path: target.path,
    headers: requestHeaders(target.sensor, target.key),
  };
  try {
    if (!loadMode) {
      return await sendOnce(sendTarget, given ?? sampleBody(endpoint, batch), target, options, io);
    }
    const bodies = options.repeat
      ? repeatedBodies(endpoint, { given, batch, count })
      : distinctBodies(endpoint, batch);
    return await sendLoad(sendTarget, { count, concurrency, rate, bodies }, target, options, io);
  } finally {
    await pool.destroy();
  }
}

/** One request: print the answer as it came, exit as the answer says. */
async function sendOnce(
  sendTarget: SendTarget,
  body: string,
  target: Target,
  options: SendOptions,
  io: CliIo,
): Promise<number> {
  let answer: { status: number; body: string };
  try {
    answer = await sendBody(sendTarget, body);
  } catch (error) {
    throw connectionError(error, target.base.href, target.trust);
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
}

/** Load mode: the summary on stdout; exit 0 only when every request was answered 2xx. */
async function sendLoad(
  sendTarget: SendTarget,
  plan: LoadPlan,
  target: Target,
  options: SendOptions,
  io: CliIo,
): Promise<number> {
  const result = await runLoad({ target: sendTarget, ...plan });
  if (options.json) writeJson(io.stdout, result.summary);
  else write(io.stdout, formatSummary(result.summary));
  if (result.summary.errors > 0) {
    const error = connectionError(result.firstConnectionError, target.base.href, target.trust);
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

async function readData(data: string, io: CliIo): Promise<string> {
  if (data === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks).toString('utf8');
  }
  if (data.startsWith('@')) return readArgumentFile(data.slice(1), '--data');
  return data;
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
