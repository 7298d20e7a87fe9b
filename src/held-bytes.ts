// The bytes of one message a stream reader holds across reads: one growable buffer, so memory follows the bytes held.

/** Below this a buffer is kept for the next message; a larger one is let go (a connection idles at this cost). */
const KEEP_BYTES = 4096;
const FIRST_BYTES = 256;

/**
 * The bytes every reader of a process's syslog listeners may hold in all, whatever their number: a reader that
 * must grow past it makes room from idle readers' kept buffers first, then by letting go of the message in
 * progress that began longest ago (its connection is closed: `evicted`), its own when that is the oldest.
 * Senders write a message at once, so the oldest unfinished one comes from a sender that is stuck or hostile; a
 * flood of connections each holding a part of a message cannot take more than the budget, however large
 * `syslog.maxMessageBytes` is.
 */
export class HeldBudget {
  readonly limit: number;
  #used = 0;
  /** Readers between messages that kept a small buffer for the next one: given back first. */
  readonly #idle = new Set<HeldBytes>();
  /** Readers inside a message, the one whose message began longest ago first. */
  readonly #live = new Set<HeldBytes>();

  constructor(limit: number) {
    this.limit = Math.max(0, Math.floor(limit));
  }

  /** Bytes held now, in all. */
  get used(): number {
    return this.#used;
  }

  /** Room for `n` more bytes of `asker`: true once made (others let go), false when `asker`'s message is the oldest. */
  grow(asker: HeldBytes, n: number): boolean {
    while (this.#used + n > this.limit) {
      const idle = first(this.#idle, asker);
      if (idle !== undefined) {
        idle.letGo();
        continue;
      }
      // #live is in the order messages began: its first is the oldest, and when that is the asker, it goes.
      const oldest = this.#live.values().next().value;
      if (oldest === undefined || oldest === asker) return false;
      oldest.letGo();
    }
    this.#used += n;
    return true;
  }

  /** `holder` gave back `n` bytes. */
  release(n: number): void {
    this.#used -= n;
  }

  /** `holder` began a message: the newest of the live ones. */
  began(holder: HeldBytes): void {
    this.#idle.delete(holder);
    this.#live.delete(holder);
    this.#live.add(holder);
  }

  /** `holder`'s message ended: idle with the buffer it kept, or holding nothing. */
  ended(holder: HeldBytes, kept: boolean): void {
    this.#live.delete(holder);
    if (kept) this.#idle.add(holder);
    else this.#idle.delete(holder);
  }
}

/** The first of `set` that is not `but`. */
function first(set: Set<HeldBytes>, but: HeldBytes): HeldBytes | undefined {
  for (const holder of set) if (holder !== but) return holder;
  return undefined;
}

/**
 * Bytes copied out of reads into one buffer that doubles up to a limit. Keeping each read's slice instead costs a
 * Buffer object and a backing store per read, and pins the whole read: a sender trickling a byte a read made each
 * byte held cost hundreds.
 */
export class HeldBytes {
  readonly #limit: number;
  readonly #budget: HeldBudget | null;
  readonly #evicted: () => void;
  #buffer: Buffer | null = null;
  #length = 0;

  /**
   * `limit`: the most bytes ever held (a reader's bound on one message). `budget`: what all readers sharing it
   * may hold; `evicted` is told when this reader's message was let go for another's room (its owner closes the
   * connection: the message is lost, and what follows it could not be framed).
   */
  constructor(limit: number, budget: HeldBudget | null = null, evicted: () => void = () => {}) {
    this.#limit = Math.max(0, Math.floor(limit));
    this.#budget = budget;
    this.#evicted = evicted;
  }

  get length(): number {
    return this.#length;
  }

  /** The memory held now, in bytes (the buffer's capacity). */
  get capacity(): number {
    return this.#buffer?.length ?? 0;
  }

  /**
   * Appends bytes `start` to `end` of `chunk` (a copy). The readers stop at their limit themselves; bytes past it
   * are not kept all the same (a hostile stream must never make a reader throw in a socket's handler).
   */
  append(chunk: Buffer, start = 0, end = chunk.length): void {
    const n = Math.min(end - start, this.#limit - this.#length);
    if (n <= 0) return;
    const need = this.#length + n;
    let buffer = this.#buffer;
    if (this.#length === 0) this.#budget?.began(this);
    if (buffer === null || buffer.length < need) {
      let size = Math.max(FIRST_BYTES, buffer?.length ?? 0);
      while (size < need) size *= 2;
      size = Math.min(size, this.#limit);
      if (this.#budget !== null && !this.#budget.grow(this, size - (buffer?.length ?? 0))) {
        // No room, and this message is the oldest: it is let go, its owner told (never silently cut).
        this.clear();
        this.#evicted();
        return;
      }
      const grown = Buffer.allocUnsafeSlow(size);
      if (buffer !== null) buffer.copy(grown, 0, 0, this.#length);
      buffer = grown;
      this.#buffer = grown;
    }
    chunk.copy(buffer, this.#length, start, start + n);
    this.#length = need;
  }

  /** The bytes held, valid until the next append (the buffer is kept for the next message when small). */
  take(): Buffer {
    const buffer = this.#buffer;
    const held = buffer === null ? Buffer.alloc(0) : buffer.subarray(0, this.#length);
    this.#length = 0;
    if (buffer !== null && buffer.length > KEEP_BYTES) this.#drop();
    this.#budget?.ended(this, this.#buffer !== null);
    return held;
  }

  /** The bytes held, as a Buffer the caller keeps (nothing of it is reused). */
  takeOwned(): Buffer {
    const held = this.take();
    if (this.#buffer !== null && held.length > 0) {
      this.#drop();
      this.#budget?.ended(this, false);
    }
    return held;
  }

  /** Forgets what is held, and lets the buffer go. */
  clear(): void {
    this.#drop();
    this.#length = 0;
    this.#budget?.ended(this, false);
  }

  /**
   * The budget's word: room is needed. An idle reader only gives back the buffer it kept; one inside a message
   * loses it, and its owner is told (evicted).
   */
  letGo(): void {
    const inside = this.#length > 0;
    this.clear();
    if (inside) this.#evicted();
  }

  #drop(): void {
    if (this.#buffer === null) return;
    this.#budget?.release(this.#buffer.length);
    this.#buffer = null;
  }
}
