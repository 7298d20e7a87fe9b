// What every load generator child prints (one JSON line), whichever tool made the load.

export interface LoadResult {
  generator: string;
  /** Requests answered 2xx. */
  requests: number;
  /** Records in those requests. */
  records: number;
  durationMs: number;
  requestsPerSecond: number;
  recordsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  /** New-connection runs: how many handshakes resumed a TLS session. */
  resumed?: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
