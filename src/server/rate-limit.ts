// Per-sensor token bucket counted in records, so one sensor cannot flood the store (DESIGN 2, step 8).

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  /** Takes `n` tokens; returns 0 when allowed, else the seconds to wait before retrying. */
  take(sensor: string, n: number, now: number): number {
    if (this.perSecond === 0) return 0;
    let bucket = this.buckets.get(sensor);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(sensor, bucket);
    }
    // A clock stepped backwards must not drain the bucket: elapsed time is never negative.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsed / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens >= n) {
      bucket.tokens -= n;
      return 0;
    }
    return Math.max(1, Math.ceil((n - bucket.tokens) / this.perSecond));
  }
}
