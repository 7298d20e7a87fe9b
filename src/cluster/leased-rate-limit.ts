// A worker's per-sensor rate limit under `serve --workers`: the primary holds the one token bucket per
// sensor; a worker leases tokens in small chunks and spends them locally, so the sum over all workers
// never exceeds the configured rate and burst, and most requests need no round trip to the primary.
import type { RateLimit } from '../inputs/https/rate-limit.js';

export interface LeaseReply {
  granted: number;
  retryAfter: number;
}

interface Held {
  tokens: number;
  at: number;
}

/** Leased tokens not spent within this long are dropped (stricter, never looser, than one bucket). */
const LEASE_MS = 1000;

export class LeasedRateLimiter implements RateLimit {
  private readonly held = new Map<string, Held>();
  private chunk = 1;

  constructor(
    private perSecond: number,
    private readonly ask: (sensor: string, need: number, want: number) => Promise<LeaseReply>,
  ) {
    this.configure(perSecond);
  }

  /** A reload's new rate (the primary's bucket has the new burst). */
  configure(perSecond: number): void {
    this.perSecond = perSecond;
    // A twentieth of a second's worth: few round trips, and little left unused in an idle worker.
    this.chunk = Math.max(1, Math.ceil(perSecond / 20));
  }

  take(sensor: string, n: number, now: number): number | Promise<number> {
    if (this.perSecond === 0) return 0;
    const held = this.held.get(sensor);
    if (held && now - held.at > LEASE_MS) this.held.delete(sensor);
    else if (held && held.tokens >= n) {
      held.tokens -= n;
      return 0;
    }
    const have = this.held.get(sensor)?.tokens ?? 0;
    const need = n - have;
    return this.ask(sensor, need, Math.max(need, this.chunk)).then((reply) => {
      if (reply.granted === 0) return reply.retryAfter;
      const current = this.held.get(sensor) ?? { tokens: 0, at: now };
      current.tokens += reply.granted;
      current.at = now;
      this.held.set(sensor, current);
      if (current.tokens < n) return 1;
      current.tokens -= n;
      return 0;
    });
  }
}
