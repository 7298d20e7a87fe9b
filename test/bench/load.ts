// Drives the load generators (a long-lived worker on the load core, or `threatcol send`) against one server,
// and measures the server's CPU time and memory over each run.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cleanEnv } from '../helpers/cli.js';
import type { LoadResult } from './load-result.js';
import type { Payload } from './payloads.js';
import {
  BIN,
  cpuSeconds,
  memory,
  type Pinning,
  pinned,
  ROOT,
  type ServerUnderTest,
  type ThreatcolServer,
} from './processes.js';

export interface Workload {
  path: '/firewall' | '/generic';
  /** What each request carries: made anew per request by the generator, so no record repeats. */
  payload: Payload;
  recordsPerRequest: number;
  connections: number;
  /** Seconds of load per run. */
  seconds: number;
  /** One TLS connection per request (`Connection: close`), TLS 1.2 as the firewall's profile uses. */
  newConnection?: boolean;
  /** With newConnection: resume the previous TLS session. */
  resume?: boolean;
}

/**
 * The benchmark's two loads over 50 keep-alive connections: single ~400-byte /firewall records, or /generic
 * arrays of 100 records.
 */
/** Server CPU time per answered request, in microseconds: capacity, even when the load generator is the limit. */
export const cpuMicrosPerRequest = (m: Measured): number =>
  (m.serverCpuSeconds / Math.max(1, m.requests)) * 1e6;

export function standardWorkload(kind: 'firewall' | 'generic', seconds: number): Workload {
  return kind === 'firewall'
    ? { path: '/firewall', payload: { kind: 'firewall' }, recordsPerRequest: 1, connections: 50, seconds }
    : {
        path: '/generic',
        payload: { kind: 'generic', records: 100 },
        recordsPerRequest: 100,
        connections: 50,
        seconds,
      };
}

export type Generator = 'autocannon' | 'reconnect' | 'send';

export interface Measured extends LoadResult {
  server: string;
  /** CPU seconds the server used during the run, and that per wall second (cores kept busy). */
  serverCpuSeconds: number;
  serverCores: number;
  serverRss: number;
}

export class LoadWorker {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  private stderr = '';

  constructor(private readonly pin: Pinning) {
    const script = join(ROOT, 'test/bench/load-worker.ts');
    const { cmd, args } = pinned(pin.pinned ? pin.loadCpu : '', ['--import', 'tsx', script]);
    this.child = spawn(cmd, args, { cwd: ROOT, env: cleanEnv(), stdio: 'pipe' });
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (this.stderr.length < 10_000) this.stderr += d;
    });
    this.lines = createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  async run(job: Record<string, unknown>): Promise<LoadResult> {
    this.child.stdin.write(`${JSON.stringify(job)}\n`);
    const next = await this.lines.next();
    if (next.done) throw new Error(`load worker exited: ${this.stderr}`);
    const r = JSON.parse(next.value) as LoadResult & { error?: string };
    if (r.error) throw new Error(`load worker: ${r.error}`);
    return r;
  }

  close(): void {
    this.child.stdin.end();
  }

  /** One run of `generator` against `server`, with the server's CPU and memory over it. */
  async measure(
    generator: Generator,
    server: ServerUnderTest,
    auth: ThreatcolServer,
    w: Workload,
    sendCount = 0,
  ): Promise<Measured> {
    const cpu0 = cpuSeconds(server.pid);
    const t0 = performance.now();
    const result =
      generator === 'send'
        ? await runSend(server, auth, w, this.pin, sendCount)
        : await this.run(job(generator, server, auth, w));
    const wall = (performance.now() - t0) / 1000;
    const used = cpuSeconds(server.pid) - cpu0;
    return {
      ...result,
      server: server.name,
      serverCpuSeconds: used,
      serverCores: used / wall,
      serverRss: memory(server.pid).rss,
    };
  }
}

/** The sensor's headers: the reference ignores them, threatcol checks them. */
export function authHeaders(auth: ThreatcolServer): Record<string, string> {
  return { 'Content-Type': 'application/json', 'X-AUTH_KEY': auth.key, 'X-SENSOR_NAME': auth.sensor };
}

function job(
  generator: Generator,
  server: ServerUnderTest,
  auth: ThreatcolServer,
  w: Workload,
): Record<string, unknown> {
  const headers = authHeaders(auth);
  if (generator === 'autocannon' && !w.newConnection) {
    const options = {
      url: `${server.url}${w.path}`,
      headers,
      connections: w.connections,
      duration: w.seconds,
    };
    return { kind: 'autocannon', options, payload: w.payload };
  }
  const options = {
    url: server.url,
    path: w.path,
    headers,
    connections: w.connections,
    durationSec: w.seconds,
    resume: w.resume === true,
    maxVersion: 'TLSv1.2',
  };
  return { kind: 'reconnect', options, payload: w.payload };
}

/**
 * `threatcol send ... --sample --count N --concurrency C --json` on the load core: the second opinion. Its
 * records are distinct too (send's own sample records, each with its own source port or address).
 */
async function runSend(
  server: ServerUnderTest,
  auth: ThreatcolServer,
  w: Workload,
  pin: Pinning,
  count: number,
): Promise<LoadResult> {
  const args = [BIN, 'send', w.path.slice(1), '--sample', '--count', String(count)];
  args.push('--concurrency', String(w.connections), '--url', server.url, '--sensor', auth.sensor);
  args.push('--key-file', auth.keyFile, '--fingerprint', auth.fingerprint, '--json');
  if (w.recordsPerRequest > 1) args.push('--batch', String(w.recordsPerRequest));
  const { cmd, args: argv } = pinned(pin.pinned ? pin.loadCpu : '', args);
  const child = spawn(cmd, argv, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  // `send --json` prints one (indented) JSON document.
  const doc = out.trim();
  if (doc === '') throw new Error(`threatcol send failed (${code}): ${err.slice(0, 2000)}`);
  const r = JSON.parse(doc) as Record<string, unknown> & { statuses?: Record<string, number> };
  const statuses = r.statuses ?? {};
  const ok = Object.entries(statuses)
    .filter(([s]) => s.startsWith('2'))
    .reduce((n, [, c]) => n + c, 0);
  const all = Object.values(statuses).reduce((n, c) => n + c, 0);
  const seconds = Number(r.durationMs) / 1000;
  return {
    generator: 'send',
    requests: ok,
    records: ok * w.recordsPerRequest,
    durationMs: Number(r.durationMs),
    requestsPerSecond: ok / seconds,
    recordsPerSecond: (ok * w.recordsPerRequest) / seconds,
    latencyMs: r.latencyMs as LoadResult['latencyMs'],
    non2xx: all - ok,
    errors: typeof r.errors === 'number' ? r.errors : Object.keys(r.errors ?? {}).length,
  };
}
