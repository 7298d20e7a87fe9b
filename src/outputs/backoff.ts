// How long a failing output waits before the next attempt: capped exponential backoff with full jitter, so
// many collectors whose receiver came back do not all retry in the same second.

export interface Backoff {
  /** The wait before the next attempt (ms); `retryAfterMs` (a receiver's Retry-After) wins when longer. */
  next(retryAfterMs?: number | null): number;
  reset(): void;
  readonly attempts: number;
}

export function createBackoff(options: { baseMs: number; capMs: number; random?: () => number }): Backoff {
  const random = options.random ?? Math.random;
  let attempts = 0;
  return {
    next(retryAfterMs) {
      const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(attempts, 30));
      attempts += 1;
      // Half fixed, half random: never a zero wait, still spread out.
      const wait = Math.round(ceiling / 2 + random() * (ceiling / 2));
      return Math.min(options.capMs, Math.max(wait, retryAfterMs ?? 0));
    },
    reset() {
      attempts = 0;
    },
    get attempts() {
      return attempts;
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
