// Back-off for restarting dead workers: a worker that dies soon after it started waits twice as long as
// the previous time (up to a bound); one that ran a while starts over from the first delay.

export interface RestartBackoffOptions {
  now: () => number;
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** A worker that lived this long is healthy again: its next restart waits only the first delay. */
  stableAfterMs?: number;
}

export class RestartBackoff {
  private readonly startedAt = new Map<number, number>();
  private readonly failures = new Map<number, number>();
  private readonly first: number;
  private readonly max: number;
  private readonly stable: number;

  constructor(private readonly options: RestartBackoffOptions) {
    this.first = options.firstDelayMs ?? 100;
    this.max = options.maxDelayMs ?? 30_000;
    this.stable = options.stableAfterMs ?? 60_000;
  }

  started(slot: number): void {
    this.startedAt.set(slot, this.options.now());
  }

  /** The delay before restarting the worker of `slot`, which just died. */
  nextDelay(slot: number): number {
    const lived = this.options.now() - (this.startedAt.get(slot) ?? 0);
    const failures = lived >= this.stable ? 0 : (this.failures.get(slot) ?? 0);
    this.failures.set(slot, failures + 1);
    return Math.min(this.max, this.first * 2 ** failures);
  }
}
