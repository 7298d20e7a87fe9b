// How many dashboard feeds read back records at once: a few at a time, a bounded queue behind them, so tabs
// opened together (or a page reloaded in a loop) cannot keep the event loop and the disk busy for the sensors.

export interface ReadSlot {
  /** True when the read waits behind others. */
  readonly queued: boolean;
  /** Resolves when the read may start; rejects with the signal's reason if aborted while waiting. */
  readonly granted: Promise<void>;
  /** Gives the slot to the next waiting read (idempotent). */
  release(): void;
}

export class ReadSlots {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(
    readonly concurrency: number,
    readonly queueLength: number,
  ) {}

  /** A slot now, a place in the queue, or null when the queue is full (the caller answers 503). */
  reserve(signal: AbortSignal): ReadSlot | null {
    let held = false;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      if (held) this.next();
    };
    if (this.active < this.concurrency) {
      this.active++;
      held = true;
      return { queued: false, granted: Promise.resolve(), release };
    }
    if (this.waiting.length >= this.queueLength) return null;
    if (signal.aborted) {
      const refused = Promise.reject(signal.reason);
      refused.catch(() => {});
      return { queued: true, granted: refused, release };
    }
    const granted = new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          held = true;
          resolve();
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      this.waiting.push(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    // The caller may stop listening once aborted; the rejection is theirs to see, never unhandled.
    granted.catch(() => {});
    return { queued: true, granted, release };
  }

  private next(): void {
    const waiter = this.waiting.shift();
    if (waiter) waiter.grant();
    else this.active--;
  }
}
