// Keep-alive (and reconnecting) load with autocannon, reduced to a LoadResult.
import { createRequire } from 'node:module';
import type { LoadResult } from './load-result.js';

interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p90: number; p99: number; max: number };
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export async function runAutocannon(
  options: Record<string, unknown>,
  recordsPerRequest: number,
): Promise<LoadResult> {
  const r = await autocannon({ method: 'POST', ...options });
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
