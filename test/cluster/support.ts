// Helpers for the `serve --workers` tests: requests on a fresh connection each (so node:cluster's round
// robin spreads them over the workers), which worker stored a record, and whether a pid is still alive.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import type { ServeProcess } from '../helpers/cli.js';
import { until } from '../helpers/until.js';

export interface FreshReply {
  status: number;
  body: string;
  /** SHA-256 fingerprint of the certificate this connection was served. */
  fingerprint: string;
}

/** One POST on a new TLS connection (no keep-alive, no session reuse). */
export function postFresh(
  url: string,
  path: string,
  body: unknown,
  auth: { sensor: string; key: string },
): Promise<FreshReply> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: 'POST',
        agent: false,
        rejectUnauthorized: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'x-sensor-name': auth.sensor,
          'x-auth-key': auth.key,
          connection: 'close',
        },
      },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, fingerprint }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Stored records by the worker whose segments hold them (the worker id is in the segment name). */
export function recordsByWorker(dataDir: string): Map<number | null, Record<string, unknown>[]> {
  const out = new Map<number | null, Record<string, unknown>[]>();
  for (const segment of listSegments(threatsDir(dataDir))) {
    const text = readFileSync(segment.path, 'utf8');
    if (text !== '' && !text.endsWith('\n')) throw new Error(`${segment.file} ends with a torn line`);
    const records = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    out.set(segment.worker, [...(out.get(segment.worker) ?? []), ...records]);
  }
  return out;
}

/** The worker (1..N) that stored the record with this `threat` marker, or undefined. */
export function workerOf(dataDir: string, marker: string): number | null | undefined {
  for (const [worker, records] of recordsByWorker(dataDir)) {
    if (records.some((r) => r.threat === marker)) return worker;
  }
  return undefined;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The workers the primary announced when it was ready: slot and pid. */
export function announcedWorkers(serve: ServeProcess): { id: number; pid: number }[] {
  const line = serve.logs.find((l) => l.msg === 'threatcol is listening');
  return (line?.workers ?? []) as { id: number; pid: number }[];
}

/** Resolves with the first log line (already printed or still to come) that `match` accepts. */
export function waitForLog(
  serve: ServeProcess,
  match: (line: Record<string, unknown>) => boolean,
  timeoutMs = 15_000,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = () => {
      const found = serve.logs.find(match);
      if (found) return resolve(found);
      if (Date.now() - started > timeoutMs) {
        return reject(new Error(`log line not seen; got: ${serve.logs.map((l) => l.msg).join(' | ')}`));
      }
      setTimeout(look, 20);
    };
    look();
  });
}

/** SIGHUP to the primary; resolves once every worker logged that it serves the certificate `sha256`. */
export async function reloadEveryWorker(
  serve: ServeProcess,
  sha256: string,
  workers = [1, 2],
): Promise<void> {
  const from = serve.logs.length;
  serve.child.kill('SIGHUP');
  for (const worker of workers) {
    await waitForLog(
      serve,
      (l) =>
        serve.logs.indexOf(l) >= from &&
        l.msg === 'reloaded the TLS material' &&
        l.worker === worker &&
        l.sha256 === sha256,
    );
  }
}

/**
 * Sends on fresh connections (`send` gets a marker to send and answers the certificate it was served) until
 * each of the two workers has stored one; what each worker's connection was served, by worker.
 */
export async function servedByEachWorker(
  dataDir: string,
  tag: string,
  send: (marker: string) => Promise<string>,
): Promise<Map<number, string>> {
  const seen = new Map<number, string>();
  for (let i = 0; i < 40 && seen.size < 2; i++) {
    const marker = `${tag}-${i}`;
    const fingerprint = await send(marker);
    // HTTPS stored it before answering; a syslog message is stored a moment after its connection ended.
    await until(() => workerOf(dataDir, marker) !== undefined, 20_000, `${marker} stored`, 20);
    seen.set(workerOf(dataDir, marker) as number, fingerprint);
  }
  return seen;
}
