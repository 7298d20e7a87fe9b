// The files backend's memory of recent dedupe keys (DESIGN 10): key -> id of the record stored first, for
// `dedupe.windowSeconds`, plus the keys whose first delivery is still being written. Bounded: MAX_DEDUPE_KEYS.
//
// Every key is in one table, so a lookup is one probe run (one cache miss on a large window, where a table
// per time slice cost up to nine). Time slices of 1/8 of the window log the keys they added; a slice older
// than the window is expired at once (its keys no longer count) and its keys deleted a few per call, so a key
// is remembered between the window and 9/8 of it, and no call pays for a whole slice.
import { KeyTable, keyBytes } from './key-table.js';

/**
 * At most this many keys are held: 36 bytes a slot in the table (key, id, slice), at most 2^21 slots for a
 * million keys, plus 16 bytes a key in its slice's log: 92 MB at most; that is the default 120 s window at a
 * sustained 8,000 records/s. Past it the oldest slice is forgotten early (logged).
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
 * One append's hold on the keys it is storing, while it is in flight. A promise is made only when another
 * delivery of the same record has to wait for it (rare: a retry racing its first delivery), not for every
 * append. It lives until the sync, so it is one object (no closures, no entry beside it in the window).
 */
export class Reservation {
  /** The keys this append added to the window (not those it found there): released if it fails. */
  readonly keys: string[] = [];
  private outcome: 'pending' | 'stored' | Error = 'pending';
  private waiting: Promise<void> | null = null;
  private resolve: (() => void) | null = null;
  private reject: ((error: Error) => void) | null = null;

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
    if (error) this.reject?.(error);
    else this.resolve?.();
  }
}

interface Slice {
  start: number;
  /** Tags this slice's keys in the table: a key deleted (a failed append) and added again later is not its. */
  tag: number;
  /** The four words of each key this slice added, to delete them when it expires. */
  log: Uint32Array;
  logged: number;
  /** Keys of the log deleted so far, once it expired. */
  drained: number;
}

/**
 * Expired keys deleted per lookup or claim: twice the rate they were added at, so an expired slice is gone
 * before the next one expires (one slice's keys at once took 57 ms at 120,000 keys: a stall in every answer).
 */
const DRAIN_PER_CALL = 2;

export class DedupeWindow {
  private readonly table = new KeyTable();
  private readonly slices: Slice[] = [];
  /** Expired slices whose keys are still being deleted, oldest first: their keys are found but not hits. */
  private readonly dying: Slice[] = [];
  private nextTag = 0;
  /**
   * Appends not durable yet. A reserved key goes into the tables at once (with its id), so a lookup reads
   * the tables only; this short list (one entry per append in flight, not a Map entry per record: that
   * churn cost the young generation) is scanned only when a lookup hits, to tell in flight from stored.
   */
  private readonly inFlight: Reservation[] = [];
  /**
   * The in-flight reservation of each key, made at the first hit on a key in flight and kept while any append
   * is in flight (then dropped): a retried batch of 1,000 records behind a full queue of 100,000 keys made a
   * scan of every in-flight key per hit (10^8 comparisons on the writer's thread). Appends with no such hit
   * never pay for it.
   */
  private pendingIndex: Map<string, Reservation> | null = null;
  private readonly sliceMs: number;
  /** Keys forgotten before their time because of the bound (for a warning). */
  evicted = 0;

  constructor(
    readonly windowMs: number,
    private readonly maxKeys = MAX_DEDUPE_KEYS,
  ) {
    this.sliceMs = Math.max(1, Math.ceil(windowMs / SLICES));
  }

  /** Keys in the table: those in flight included, and expired ones not yet deleted. */
  get size(): number {
    return this.table.size;
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
    if (reservation.keys.length === 0) this.inFlight.push(reservation);
    reservation.keys.push(key);
    this.pendingIndex?.set(key, reservation);
    return null;
  }

  /**
   * The append holding `reservation` ended: its keys stay remembered (from the time they were reserved) if
   * it was stored, and are forgotten (retryable) if not.
   */
  release(reservation: Reservation, stored: boolean): void {
    const i = this.inFlight.indexOf(reservation);
    if (i < 0) return;
    // Order does not matter: swap with the last, no shifting.
    this.inFlight[i] = this.inFlight[this.inFlight.length - 1] as Reservation;
    this.inFlight.pop();
    if (this.inFlight.length === 0) this.pendingIndex = null;
    else if (this.pendingIndex !== null) {
      for (const key of reservation.keys) {
        if (this.pendingIndex.get(key) === reservation) this.pendingIndex.delete(key);
      }
    }
    if (stored) return;
    for (const key of reservation.keys) this.forget(key);
  }

  /** Remembers a stored key (also used when rebuilding the window from the newest segments, oldest first). */
  remember(key: string, id: string, at: number): void {
    this.add(keyBytes(key), id, at);
  }

  private find(bytes: Buffer): string | undefined {
    const slot = this.table.slotOf(bytes);
    if (slot < 0) return undefined;
    // Tags grow with time: below the oldest live slice's, the key's slice has expired (not yet drained).
    if (this.table.tagAt(slot) < (this.slices[0]?.tag ?? this.nextTag)) {
      this.table.deleteSlot(slot);
      return undefined;
    }
    return this.table.idAt(slot);
  }

  private add(bytes: Buffer, id: string, at: number): void {
    let last = this.slices.at(-1);
    if (!last || at >= last.start + this.sliceMs) {
      last = {
        start: at - (at % this.sliceMs),
        tag: this.nextTag++,
        log: new Uint32Array(4096),
        logged: 0,
        drained: 0,
      };
      this.slices.push(last);
    }
    if (!this.table.add(bytes, id, last.tag)) return;
    if ((last.logged + 1) * 4 > last.log.length) {
      const log = new Uint32Array(last.log.length * 2);
      log.set(last.log);
      last.log = log;
    }
    this.table.words(bytes, last.log, last.logged * 4);
    last.logged += 1;
    if (this.table.size > this.maxKeys) this.evict();
  }

  /** A failed append's key: deleted from the table now; its slice's log entry then finds nothing to delete. */
  private forget(key: string): void {
    this.table.delete(keyBytes(key));
  }

  /** The reservation of the append storing `key`, or null once it is stored. */
  private pendingFor(key: string): Reservation | null {
    if (this.inFlight.length === 0) return null;
    if (this.pendingIndex === null) {
      this.pendingIndex = new Map();
      for (const r of this.inFlight) for (const k of r.keys) this.pendingIndex.set(k, r);
    }
    return this.pendingIndex.get(key) ?? null;
  }

  private expire(now: number): void {
    while (this.slices.length > 0 && (this.slices[0] as Slice).start + this.sliceMs <= now - this.windowMs) {
      this.dying.push(this.slices.shift() as Slice);
    }
    if (this.dying.length > 0) this.drain(DRAIN_PER_CALL);
  }

  /** Deletes up to `limit` keys of the expired slices; returns how many it deleted. */
  private drain(limit: number): number {
    let deleted = 0;
    let left = limit;
    while (left > 0 && this.dying.length > 0) {
      const slice = this.dying[0] as Slice;
      const { log, tag } = slice;
      for (; left > 0 && slice.drained < slice.logged; left--, slice.drained++) {
        const at = slice.drained * 4;
        const k0 = log[at] as number;
        const k1 = log[at + 1] as number;
        if (this.table.deleteTagged(k0, k1, log[at + 2] as number, log[at + 3] as number, tag)) deleted += 1;
      }
      if (slice.drained === slice.logged) this.dying.shift();
    }
    return deleted;
  }

  /** Over the bound: the expired keys go first, then the oldest slices before their time (counted, logged). */
  private evict(): void {
    this.drain(Number.POSITIVE_INFINITY);
    while (this.table.size > this.maxKeys && this.slices.length > 0) {
      this.dying.push(this.slices.shift() as Slice);
      this.evicted += this.drain(Number.POSITIVE_INFINITY);
    }
  }
}
