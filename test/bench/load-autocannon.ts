// Keep-alive load with autocannon, every request a new body (distinct records), reduced to a LoadResult.
import { createRequire } from 'node:module';
import type { LoadResult } from './load-result.js';
import { type Payload, payloadBodies } from './payloads.js';

interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p90: number; p99: number; max: number };
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
/** The part of autocannon's per-connection client this file replaces (see setupClient below). */
interface AutocannonClient {
  getRequestBuffer(): Buffer;
}

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface AutocannonOptions {
  url: string;
  headers: Record<string, string>;
  connections: number;
  duration: number;
}

export async function runAutocannon(
  options: AutocannonOptions,
  payload: Payload,
  recordsPerRequest: number,
): Promise<LoadResult> {
  const next = payloadBodies(payload);
  const url = new URL(options.url);
  let head = `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n`;
  for (const [k, v] of Object.entries(options.headers)) head += `${k}: ${v}\r\n`;
  let made = 0;
  // autocannon's own way to vary bodies (setupRequest) rebuilds each request through its generic builder,
  // 8-13 us of the generator's CPU per request (measured on its RequestIterator), which at the reference's 40,000 requests/s would make
  // the generator the limit. Instead each connection's client takes its next request from here: the
  // prebuilt head and a new body, about 2 us. The count below proves every request took one.
  const setupClient = (client: AutocannonClient) => {
    client.getRequestBuffer = () => {
      made += 1;
      const body = next();
      return Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`), body]);
    };
  };
  const r = await autocannon({ ...options, method: 'POST', setupClient });
  const answered = r['2xx'] + r.non2xx;
  if (made < answered) {
    throw new Error(
      `autocannon sent ${answered} requests but took ${made} bodies: it no longer asks getRequestBuffer() per request (a new version?), so the bodies repeated`,
    );
  }
  return {
    generator: 'autocannon',
    requests: r['2xx'],
    records: r['2xx'] * recordsPerRequest,
    durationMs: r.duration * 1000,
    requestsPerSecond: r['2xx'] / r.duration,
    recordsPerSecond: (r['2xx'] * recordsPerRequest) / r.duration,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}
