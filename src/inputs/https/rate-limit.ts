// Per-sensor token bucket counted in records, so one sensor cannot flood the store (DESIGN 2, step 8).

/** What the request pipeline asks: 0 when `n` records may pass now, else the seconds to wait. */
export interface RateLimit {
  take(sensor: string, n: number, now: number): number | Promise<number>;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter implements RateLimit {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private perSecond: number,
    private burst: number,
  ) {}

  /** A reload's new limits: each bucket keeps its tokens, capped by the new burst at its next refill. */
  configure(perSecond: number, burst: number): void {
    this.perSecond = perSecond;
    this.burst = burst;
  }

  /** Takes `n` tokens; returns 0 when allowed, else the seconds to wait before retrying. */
  take(sensor: string, n: number, now: number): number {
    if (this.perSecond === 0) return 0;
    const bucket = this.refill(sensor, now);
    if (bucket.tokens >= n) {
      bucket.tokens -= n;
      return 0;
    }
    return this.waitFor(n - bucket.tokens);
  }

  /**
   * `serve --workers`: hands a worker between `need` and `want` tokens (as many as the bucket holds), so
   * the workers together never pass more than one bucket allows. Nothing when fewer than `need` are left.
   */
  lease(sensor: string, need: number, want: number, now: number): { granted: number; retryAfter: number } {
    if (this.perSecond === 0) return { granted: want, retryAfter: 0 };
    const bucket = this.refill(sensor, now);
    if (bucket.tokens < need) return { granted: 0, retryAfter: this.waitFor(need - bucket.tokens) };
    const granted = Math.max(need, Math.min(want, Math.floor(bucket.tokens)));
    bucket.tokens -= granted;
    return { granted, retryAfter: 0 };
  }

  private waitFor(missing: number): number {
    return Math.max(1, Math.ceil(missing / this.perSecond));
  }

  private refill(sensor: string, now: number): Bucket {
    let bucket = this.buckets.get(sensor);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(sensor, bucket);
    }
    // A clock stepped backwards must not drain the bucket: elapsed time is never negative.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsed / 1000) * this.perSecond);
    bucket.at = now;
    return bucket;
  }
}
