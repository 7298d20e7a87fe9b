// The bytes of one message a stream reader holds across reads: one growable buffer, so memory follows the bytes held.

/** Below this a buffer is kept for the next message; a larger one is let go (a connection idles at this cost). */
const KEEP_BYTES = 4096;
const FIRST_BYTES = 256;

/**
 * Bytes copied out of reads into one buffer that doubles up to a limit. Keeping each read's slice instead costs a
 * Buffer object and a backing store per read, and pins the whole read: a sender trickling a byte a read made each
 * byte held cost hundreds.
 */
export class HeldBytes {
  readonly #limit: number;
  #buffer: Buffer | null = null;
  #length = 0;

  /** `limit`: the most bytes ever held (a reader's bound on one message). */
  constructor(limit: number) {
    this.#limit = Math.max(0, Math.floor(limit));
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
    if (buffer === null || buffer.length < need) {
      let size = Math.max(FIRST_BYTES, buffer?.length ?? 0);
      while (size < need) size *= 2;
      const grown = Buffer.allocUnsafeSlow(Math.min(size, this.#limit));
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
    if (buffer !== null && buffer.length > KEEP_BYTES) this.#buffer = null;
    return held;
  }

  /** The bytes held, as a Buffer the caller keeps (nothing of it is reused). */
  takeOwned(): Buffer {
    const held = this.take();
    if (this.#buffer !== null && held.length > 0) this.#buffer = null;
    return held;
  }

  /** Forgets what is held, and lets the buffer go. */
  clear(): void {
    this.#buffer = null;
    this.#length = 0;
  }
}
