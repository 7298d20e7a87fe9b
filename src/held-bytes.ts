// The bytes of one message a stream reader holds across reads: one growable buffer, so memory follows the bytes held.

/** Below this a buffer is kept for the next message; a larger one is let go (a connection idles at this cost). */
const KEEP_BYTES = 4096;
const FIRST_BYTES = 256;

/**
 * The bytes every reader of a process's syslog listeners may hold in all, whatever their number: a reader that
 * must grow past it makes room by letting go of the oldest message in progress of another (its connection is
 * closed: `evicted`), or is let go itself when its own message is the oldest. Senders write a message at once,
 * so the oldest unfinished one comes from a sender that is stuck or hostile; a flood of connections each holding
 * a part of a message cannot take more than the budget, however large `syslog.maxMessageBytes` is.
 */
export class HeldBudget {
  readonly limit: number;
  #used = 0;
  /** Readers holding memory, the one whose message began longest ago first (idle ones keep a small buffer). */
  readonly #holders = new Set<HeldBytes>();

  constructor(limit: number) {
    this.limit = Math.max(0, Math.floor(limit));
  }

  /** Bytes held now, in all. */
  get used(): number {
    return this.#used;
  }

  /** Room for `n` more bytes of `asker`: true once made (others let go), false when `asker` is the oldest left. */
  grow(asker: HeldBytes, n: number): boolean {
    while (this.#used + n > this.limit) {
      let victim: HeldBytes | undefined;
      for (const holder of this.#holders) {
        if (holder !== asker) {
          victim = holder;
          break;
        }
      }
      // An idle reader gives back its kept buffer first; else the oldest message goes, the asker's own included.
      if (victim === undefined) return false;
      if (victim.length > 0 && asker.length > 0 && asker.startedAt <= victim.startedAt) return false;
      victim.letGo();
    }
    this.#used += n;
    this.#holders.add(asker);
    return true;
  }

  /** `holder` gave back `n` bytes (`none`: it holds nothing any more). */
  release(holder: HeldBytes, n: number, none: boolean): void {
    this.#used -= n;
    if (none) this.#holders.delete(holder);
  }

  /** `holder` began a message: it goes to the end of the line (the newest). */
  began(holder: HeldBytes): void {
    this.#holders.delete(holder);
    this.#holders.add(holder);
  }
}

let clock = 0;

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
  /** When the message held began (a count, not a time: its order among the budget's holders). */
  startedAt = 0;

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
    if (this.#length === 0 && this.#budget !== null) {
      this.startedAt = ++clock;
      if (buffer !== null) this.#budget.began(this);
    }
    if (buffer === null || buffer.length < need) {
      let size = Math.max(FIRST_BYTES, buffer?.length ?? 0);
      while (size < need) size *= 2;
      size = Math.min(size, this.#limit);
      if (this.#budget !== null && !this.#budget.grow(this, size - (buffer?.length ?? 0))) {
        this.letGo();
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
    return held;
  }

  /** The bytes held, as a Buffer the caller keeps (nothing of it is reused). */
  takeOwned(): Buffer {
    const held = this.take();
    if (this.#buffer !== null && held.length > 0) this.#drop();
    return held;
  }

  /** Forgets what is held, and lets the buffer go. */
  clear(): void {
    this.#drop();
    this.#length = 0;
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
    this.#budget?.release(this, this.#buffer.length, true);
    this.#buffer = null;
  }
}
