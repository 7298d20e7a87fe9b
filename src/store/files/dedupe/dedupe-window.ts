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

/** An append's keys while they are being stored, for the rare lookup that finds one of them in a table. */
interface InFlight {
  keys: string[];
  reservation: Reservation;
}

export class DedupeWindow {
  private readonly slices: Slice[] = [];
  /**
   * Appends not durable yet. A reserved key goes into the tables at once (with its id), so a lookup reads
   * the tables only; this short list (one entry per append in flight, not a Map entry per record: that
   * churn cost the young generation) is scanned only when a lookup hits, to tell in flight from stored.
   */
  private readonly inFlight: InFlight[] = [];
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

  /** Keys held, those in flight included. */
  get size(): number {
    return this.count;
  }

  lookup(key: string, now: number): DedupeHit | null {
    this.expire(now);
    const id = this.find(keyBytes(key));
    return id === undefined ? null : { id, pending: this.pendingFor(key) };
  }

  /**
   * One pass for an append's key: the first delivery's hit if the key is known, or else null with the key
   * reserved for `id` (decoded and looked up once, where a lookup and a reserve did it twice).
   */
  claim(key: string, id: string, reservation: Reservation, now: number): DedupeHit | null {
    this.expire(now);
    const bytes = keyBytes(key);
    const first = this.find(bytes);
    if (first !== undefined) return { id: first, pending: this.pendingFor(key) };
    this.add(bytes, id, now);
    this.holdFor(reservation).keys.push(key);
    return null;
  }

  /**
   * The append holding `reservation` ended: its keys stay remembered (from the time they were reserved) if
   * it was stored, and are forgotten (retryable) if not.
   */
  release(reservation: Reservation, stored: boolean): void {
    const i = this.inFlight.findIndex((f) => f.reservation === reservation);
    if (i < 0) return;
    const entry = this.inFlight[i] as InFlight;
    // Order does not matter: swap with the last, no shifting.
    this.inFlight[i] = this.inFlight[this.inFlight.length - 1] as InFlight;
    this.inFlight.pop();
    if (stored) return;
    for (const key of entry.keys) this.forget(key);
  }

  /** Remembers a stored key (also used when rebuilding the window from the newest segments, oldest first). */
  remember(key: string, id: string, at: number): void {
    this.add(keyBytes(key), id, at);
  }

  private find(bytes: Buffer): string | undefined {
    for (let i = this.slices.length - 1; i >= 0; i--) {
      const id = (this.slices[i] as Slice).keys.get(bytes);
      if (id !== undefined) return id;
    }
    return undefined;
  }

  private add(bytes: Buffer, id: string, at: number): void {
    let last = this.slices.at(-1);
    if (!last || at >= last.start + this.sliceMs) {
      last = { start: at - (at % this.sliceMs), keys: new KeyTable() };
      this.slices.push(last);
    }
    if (!last.keys.add(bytes, id)) return;
    this.count += 1;
    while (this.count > this.maxKeys) this.drop(true);
  }

  private forget(key: string): void {
    const bytes = keyBytes(key);
    for (const slice of this.slices) {
      if (slice.keys.delete(bytes)) {
        this.count -= 1;
        return;
      }
    }
  }

  /** The reservation of the append storing `key`, or null once it is stored (a hit: rare, so a scan). */
  private pendingFor(key: string): Reservation | null {
    for (const f of this.inFlight) if (f.keys.includes(key)) return f.reservation;
    return null;
  }

  private holdFor(reservation: Reservation): InFlight {
    const last = this.inFlight.at(-1);
    if (last?.reservation === reservation) return last;
    const entry: InFlight = { keys: [], reservation };
    this.inFlight.push(entry);
    return entry;
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
