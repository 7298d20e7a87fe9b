// The files backend's memory of recent dedupe keys (DESIGN 10): key -> id of the record stored first, for
// `dedupe.windowSeconds`, plus the keys whose first delivery is still being written. Bounded: MAX_DEDUPE_KEYS.
//
// Keys live in time slices of 1/8 of the window; a whole slice is forgotten once it is older than the
// window, so a key is remembered between the window and 9/8 of it, and expiry costs nothing per key.
import { KeyTable, keyBytes } from './key-table.js';

/**
 * At most this many keys are held: 32 bytes each in typed arrays, at most 64 with the tables' free slots,
 * so 64 MB at most; that is the default 120 s window at a sustained 8,000 records/s. Past it the oldest
 * slice is forgotten early (logged).
 */
export const MAX_DEDUPE_KEYS = 1_000_000;
const SLICES = 8;

export interface DedupeHit {
  /** The id the first delivery stored (or is storing). */
  id: string;
  /** While the first delivery is not durable yet: its reservation, to wait for (null once stored). */
  pending: Reservation | null;
}

/**
 * One append's hold on the keys it is storing. A promise is made only when another delivery of the same
 * record has to wait for it (rare: a retry racing its first delivery), not for every append.
 */
export class Reservation {
  private outcome: 'pending' | 'stored' | Error = 'pending';
  private waiting: Promise<void> | null = null;
  private resolve: () => void = () => {};
  private reject: (error: Error) => void = () => {};

  /** Settles when the append is durable; rejects with its error if it failed. */
  wait(): Promise<void> {
    if (this.outcome === 'stored') return Promise.resolve();
    if (this.outcome instanceof Error) return Promise.reject(this.outcome);
    this.waiting ??= new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    return this.waiting;
  }

  settle(error: Error | null): void {
    if (this.outcome !== 'pending') return;
    this.outcome = error ?? 'stored';
    if (error) this.reject(error);
    else this.resolve();
  }
}

interface Slice {
  start: number;
  keys: KeyTable;
}

export class DedupeWindow {
  private readonly slices: Slice[] = [];
  private readonly pending = new Map<string, { id: string; reservation: Reservation }>();
  private readonly sliceMs: number;
  private count = 0;
  /** Keys forgotten before their time because of the bound (for a warning). */
  evicted = 0;

  constructor(
    readonly windowMs: number,
    private readonly maxKeys = MAX_DEDUPE_KEYS,
  ) {
    this.sliceMs = Math.max(1, Math.ceil(windowMs / SLICES));
  }

  get size(): number {
    return this.count + this.pending.size;
  }

  lookup(key: string, now: number): DedupeHit | null {
    const inFlight = this.pending.get(key);
    if (inFlight) return { id: inFlight.id, pending: inFlight.reservation };
    this.expire(now);
    if (this.slices.length === 0) return null;
    const bytes = keyBytes(key);
    for (let i = this.slices.length - 1; i >= 0; i--) {
      const id = (this.slices[i] as Slice).keys.get(bytes);
      if (id !== undefined) return { id, pending: null };
    }
    return null;
  }

  /** Marks `key` as being stored by the delivery holding `reservation`. */
  reserve(key: string, id: string, reservation: Reservation): void {
    this.pending.set(key, { id, reservation });
  }

  /** The delivery that reserved `key` ended: remembered if it was stored, forgotten (retryable) if not. */
  settle(key: string, stored: boolean, at: number): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    this.pending.delete(key);
    if (stored) this.remember(key, entry.id, at);
  }

  /** Remembers a stored key (also used when rebuilding the window from the newest segments, oldest first). */
  remember(key: string, id: string, at: number): void {
    let last = this.slices.at(-1);
    if (!last || at >= last.start + this.sliceMs) {
      last = { start: at - (at % this.sliceMs), keys: new KeyTable() };
      this.slices.push(last);
    }
    if (!last.keys.add(keyBytes(key), id)) return;
    this.count += 1;
    while (this.count > this.maxKeys) this.drop(true);
  }

  private expire(now: number): void {
    while (this.slices.length > 0 && (this.slices[0] as Slice).start + this.sliceMs <= now - this.windowMs) {
      this.drop(false);
    }
  }

  private drop(early: boolean): void {
    const first = this.slices.shift();
    if (!first) return;
    this.count -= first.keys.size;
    if (early) this.evicted += first.keys.size;
  }
}
