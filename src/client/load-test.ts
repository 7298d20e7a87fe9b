// The load generator behind `send --count`: N requests over C keep-alive connections, optionally paced to R
// requests/s, and a summary of what the collector answered (records stored, duplicates, latency, statuses).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { type ErrorCode, isErrorCode } from '../errors.js';
import type { LoadBodies } from './load-bodies.js';
import type { SendTarget } from './send-request.js';

export interface LoadOptions {
  target: SendTarget;
  bodies: LoadBodies;
  count: number;
  concurrency: number;
  /** Requests per second over all connections; undefined: as fast as answers come. */
  rate?: number | undefined;
}

export interface LoadSummary {
  requests: number;
  /** Records in requests answered 2xx, as the answers count them (`accepted`): stored plus duplicates. */
  records: number;
  /** Records the collector stored: `accepted` less `duplicates`, summed over the answers. */
  stored: number;
  /** Records the collector found already stored (retried deliveries, `"duplicates"`) and did not store again. */
  duplicates: number;
  durationMs: number;
  requestsPerSecond: number;
  recordsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  statuses: Record<string, number>;
  /** Requests that got no answer (connection refused or reset, TLS failure, timeout). */
  errors: number;
}

export interface LoadResult {
  summary: LoadSummary;
  /** The first server error code seen in a non-2xx answer, for the exit code. */
  firstErrorCode: ErrorCode | null;
  firstConnectionError: unknown;
}

/** Latencies above an hour are counted as an hour. */
const MAX_LATENCY_US = 3_600_000_000;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { target, bodies, count } = options;
  // Fixed memory whatever --count is (an array of every latency was 800 MB at --count 100000000): an HDR
  // histogram in microseconds, 3 significant digits (percentiles within 0.1%), ~100 KB. Loaded here, not at
  // start-up: every CLI command imports this module.
  const { build } = await import('hdr-histogram-js');
  const latencies = build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: MAX_LATENCY_US,
    numberOfSignificantValueDigits: 3,
    bitBucketSize: 32,
    useWebAssembly: false,
  });
  let answered = 0;
  let records = 0;
  let duplicates = 0;
  let errors = 0;
  let next = 0;
  let firstErrorCode: ErrorCode | null = null;
  let firstConnectionError: unknown = null;
  const statuses = new Map<number, number>();
  const request: Dispatcher.RequestOptions = {
    path: target.path,
    method: 'POST',
    headers: target.headers,
    body: null,
  };
  const withKey = (key: string) => ({ ...target.headers, 'idempotency-key': key });
  const start = performance.now();
  const interval = options.rate ? 1000 / options.rate : 0;

  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      if (interval > 0) {
        const wait = start + i * interval - performance.now();
        if (wait > 1) await sleep(wait);
      }
      const t0 = performance.now();
      try {
        const key = bodies.idempotencyKey(i);
        const res = await target.pool.request({
          ...request,
          body: bodies.body(i),
          headers: key === null ? target.headers : withKey(key),
        });
        const status = res.statusCode;
        const text = await res.body.text();
        if (status >= 200 && status < 300) {
          const answer = readAnswer(text);
          records += answer?.accepted ?? bodies.recordsPerRequest;
          duplicates += answer?.duplicates ?? 0;
        } else if (firstErrorCode === null) {
          firstErrorCode = errorCodeOf(text);
        }
        const us = Math.round((performance.now() - t0) * 1000);
        latencies.recordValue(Math.min(MAX_LATENCY_US, Math.max(1, us)));
        answered += 1;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      } catch (error) {
        errors += 1;
        firstConnectionError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, count) }, worker));
  const durationMs = performance.now() - start;

  // A percentile is its bucket's upper bound, which can pass the largest value recorded: never show p99 > max.
  const at = (q: number) =>
    answered === 0
      ? 0
      : (q >= 1
          ? latencies.maxValue
          : Math.min(latencies.maxValue, latencies.getValueAtPercentile(q * 100))) / 1000;
  const seconds = durationMs / 1000;
  return {
    summary: {
      requests: count,
      records,
      stored: records - duplicates,
      duplicates,
      durationMs: round(durationMs),
      requestsPerSecond: round(seconds > 0 ? count / seconds : 0),
      recordsPerSecond: round(seconds > 0 ? records / seconds : 0),
      latencyMs: { p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)), max: round(at(1)) },
      statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b).map(([s, n]) => [String(s), n])),
      errors,
    },
    firstErrorCode,
    firstConnectionError,
  };
}

export function formatSummary(s: LoadSummary): string {
  const statusText = Object.entries(s.statuses)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  const again = s.duplicates > 0 ? ' (retried deliveries: stored before, not again)' : '';
  return [
    `requests   ${s.requests} in ${(s.durationMs / 1000).toFixed(2)} s`,
    `records    ${s.stored} stored, ${s.duplicates} duplicates${again}`,
    `rate       ${s.requestsPerSecond.toFixed(1)} requests/s, ${s.recordsPerSecond.toFixed(1)} records/s`,
    `latency    p50 ${s.latencyMs.p50.toFixed(2)} ms, p90 ${s.latencyMs.p90.toFixed(2)} ms, p99 ${s.latencyMs.p99.toFixed(2)} ms, max ${s.latencyMs.max.toFixed(2)} ms`,
    `statuses   ${statusText || 'none'}`,
    `errors     ${s.errors}`,
  ].join('\n');
}

/**
 * What a 2xx answer says was done with the records: `{"accepted": n, "ids": [...], "duplicates": d}`
 * (duplicates only when there were some); null when it is not such an answer (a proxy, another server).
 */
function readAnswer(body: string): { accepted: number; duplicates: number } | null {
  try {
    const answer = JSON.parse(body) as { accepted?: unknown; duplicates?: unknown };
    if (!Number.isSafeInteger(answer?.accepted)) return null;
    const duplicates = Number.isSafeInteger(answer.duplicates) ? (answer.duplicates as number) : 0;
    return { accepted: answer.accepted as number, duplicates };
  } catch {
    return null;
  }
}

function errorCodeOf(body: string): ErrorCode | null {
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } })?.error?.code;
    return isErrorCode(code) ? code : null;
  } catch {
    return null;
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
