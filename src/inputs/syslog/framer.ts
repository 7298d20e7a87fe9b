// Splits a syslog TCP byte stream into messages (RFC 6587): octet counting or LF/CRLF/NUL trailers, per frame.
import { type HeldBudget, HeldBytes } from '../../held-bytes.js';

export interface FramerOptions {
  /** The longest message kept, in bytes; a longer one is truncated to this or dropped (`oversize`). */
  maxMessageBytes: number;
  /** What becomes of a message longer than maxMessageBytes: delivered cut to the limit and flagged, or dropped. */
  oversize: 'truncate' | 'drop';
  /** The bytes every framer sharing it may hold (held-bytes.ts); none: only maxMessageBytes bounds this one. */
  budget?: HeldBudget;
  /** This framer's message was let go for another's room: nothing more is read (its owner closes the connection). */
  evicted?: () => void;
}

export interface Frame {
  /** The message without its length prefix or trailer (cut to maxMessageBytes when `truncated`). */
  message: Buffer;
  /** The sender's message was longer than maxMessageBytes and this is its beginning. */
  truncated: boolean;
}

/**
 * Receives a message as bytes `start` to `end` of `bytes`, which may be the read chunk itself: valid only during
 * the call (decode or copy it there). The connection decodes the text straight from the chunk, so a message
 * costs no Buffer of its own (a third of the input's CPU was the garbage collector).
 */
export type FrameSink = (bytes: Buffer, start: number, end: number, truncated: boolean) => void;

/** What the framer saw besides messages, for the operator's counters. */
export interface FramerCounts {
  /** Messages longer than maxMessageBytes, delivered truncated or dropped. */
  oversize: number;
  /** Bytes skipped between frames: blanks (LF, CR, NUL, space, tab), as blank lines and counted frames' trailers. */
  garbageBytes: number;
  /**
   * Messages lost inside their frame: an octet-counted frame the stream ended inside of, or any frame begun when
   * the connection was cut without an end (reset, closed for a cap or a stall): the sender's message is gone.
   */
  incomplete: number;
}

export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * The most digits a length prefix may have: 9 digits declare up to ~1 GB, far past any limit. A longer digit
 * run is not taken for a length (it would make the framer skip gigabytes): the frame is read to its trailer.
 */
const MAX_LENGTH_DIGITS = 9;

const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;
const SP = 0x20;
const TAB = 0x09;
const ZERO = 0x30;
const NINE = 0x39;

type State =
  | 'between' // at a frame boundary, skipping garbage
  | 'length' // reading the digits of a length prefix
  | 'octets' // reading the `remaining` bytes an octet-counted frame declared
  | 'trailer' // reading a message up to LF or NUL
  | 'skip-octets' // past maxMessageBytes of an octet-counted frame: discarding the rest it declared
  | 'skip-trailer'; // past maxMessageBytes of a trailer frame: discarding up to its trailer

/**
 * A streaming framer: push(chunk) returns the messages completed by that chunk (pushTo hands them to a sink). The same byte stream gives the
 * same messages however it is split into reads, and the framer never holds more than maxMessageBytes + 1 bytes
 * of a message (its length digits included), copied into one buffer, so a sender cannot make it buffer without
 * bound, nor make a byte held cost more than a byte by sending it in a read of its own.
 */
export class SyslogFramer {
  readonly counts: FramerCounts = { oversize: 0, garbageBytes: 0, incomplete: 0 };
  readonly #max: number;
  readonly #drop: boolean;
  #state: State = 'between';
  /** The message bytes held so far, when a frame spans reads (a frame within one read is handed on in place). */
  readonly #held: HeldBytes;
  #framesStarted = 0;
  /** 'length': the value of the digits read; 'octets'/'skip-octets': bytes of the frame still to come. */
  #remaining = 0;
  #digits = 0;
  /** Let go for the budget: the stream is no longer framed (what follows could not be told apart). */
  #gone = false;

  constructor(options: FramerOptions) {
    this.#max = Math.max(1, Math.floor(options.maxMessageBytes));
    this.#drop = options.oversize === 'drop';
    this.#held = new HeldBytes(this.#max + 1, options.budget ?? null, () => {
      this.#gone = true;
      options.evicted?.();
    });
  }

  /** Inside a frame: its first byte came and it has not ended (garbage between frames does not count). */
  get midFrame(): boolean {
    return this.#state !== 'between';
  }

  /** How many frames have begun: with midFrame, tells whether the frame in progress is still the same one. */
  get framesStarted(): number {
    return this.#framesStarted;
  }

  /** The bytes of the frame in progress held now (its buffer's capacity). */
  get heldBytes(): number {
    return this.#held.capacity;
  }

  push(chunk: Buffer): Frame[] {
    const out: Frame[] = [];
    this.pushTo(chunk, collectInto(out));
    return out;
  }

  pushTo(chunk: Buffer, out: FrameSink): void {
    let i = 0;
    const n = chunk.length;
    while (i < n && !this.#gone) {
      switch (this.#state) {
        case 'between': {
          const b = chunk[i] as number;
          if (b > ZERO && b <= NINE) {
            this.#state = 'length';
            this.#remaining = 0;
            this.#digits = 0;
            this.#framesStarted++;
          } else if (b === LF || b === CR || b === NUL || b === SP || b === TAB) {
            this.counts.garbageBytes++;
            i++;
          } else {
            // `<`, or a message without its <PRI> (a device that sends none, a line continued): read to its
            // trailer, as rsyslog does, and left to the intake to count as invalid. Skipped a byte at a time, its
            // first digits followed by a space would be taken for a length and swallow the messages after it.
            this.#state = 'trailer';
            this.#framesStarted++;
          }
          break;
        }
        case 'length': {
          const b = chunk[i] as number;
          if (b >= ZERO && b <= NINE && this.#digits < MAX_LENGTH_DIGITS) {
            this.#remaining = this.#remaining * 10 + (b - ZERO);
            this.#digits++;
            i++;
          } else if (b === SP && this.#digits > 0) {
            i++;
            this.#state = 'octets';
            // remaining is at least 1: the first digit is 1-9.
          } else {
            // Not a length prefix after all: the digits begin a message read to its trailer.
            this.#state = 'trailer';
            const digits = Buffer.from(String(this.#remaining), 'latin1');
            this.#hold(digits, 0, digits.length, out);
          }
          break;
        }
        case 'octets': {
          // The whole frame in this chunk (nearly always): handed on where it lies, nothing held.
          if (this.#held.length === 0 && this.#remaining <= this.#max && this.#remaining <= n - i) {
            out(chunk, i, i + this.#remaining, false);
            i += this.#remaining;
            this.#remaining = 0;
            this.#state = 'between';
            break;
          }
          const room = this.#max - this.#held.length;
          const take = Math.min(this.#remaining, room, n - i);
          this.#held.append(chunk, i, i + take);
          // Let go for the budget: the message is lost (counted at the close), nothing of it delivered.
          if (this.#gone) return;
          this.#remaining -= take;
          i += take;
          if (this.#remaining === 0) {
            const message = this.#held.take();
            out(message, 0, message.length, false);
            this.#state = 'between';
          } else if (this.#held.length === this.#max) {
            this.#oversize(out);
            this.#state = 'skip-octets';
          }
          break;
        }
        case 'skip-octets': {
          const take = Math.min(this.#remaining, n - i);
          this.#remaining -= take;
          i += take;
          if (this.#remaining === 0) this.#state = 'between';
          break;
        }
        case 'trailer': {
          const end = findTrailer(chunk, i);
          if (end !== -1 && this.#held.length === 0) {
            // The whole frame in this chunk: as #hold and #endTrailerFrame would take it, without holding it.
            const last = chunk[end] === LF && end > i && chunk[end - 1] === CR ? end - 1 : end;
            if (last - i <= this.#max) {
              if (last > i) out(chunk, i, last, false);
              i = end + 1;
              this.#state = 'between';
              break;
            }
          }
          if (end === -1) {
            this.#hold(chunk, i, n, out);
            i = n;
            break;
          }
          this.#hold(chunk, i, end, out);
          if (this.#gone) return;
          i = end + 1;
          if (this.#state === 'trailer') this.#endTrailerFrame(chunk[end] === LF, out);
          else this.#state = 'between'; // #hold found it oversize: its trailer ends the skip
          break;
        }
        case 'skip-trailer': {
          const end = findTrailer(chunk, i);
          if (end === -1) i = n;
          else {
            i = end + 1;
            this.#state = 'between';
          }
          break;
        }
      }
    }
  }

  /** The stream ended: a trailer frame without its trailer is still a message; an unfinished octet frame is not. */
  end(): Frame[] {
    const out: Frame[] = [];
    this.endTo(collectInto(out));
    return out;
  }

  endTo(out: FrameSink): void {
    if (this.#gone) return;
    if (this.#state === 'trailer') this.#endTrailerFrame(false, out);
    else if (this.#state === 'length') this.#endTrailerFrame(false, out, String(this.#remaining));
    else if (this.#state === 'octets') {
      this.counts.incomplete++;
      this.#held.clear();
    }
    this.#state = 'between';
  }

  /** The connection is gone without its end (or after it): a frame begun and not delivered is counted lost. */
  abandon(): void {
    if (this.#state === 'length' || this.#state === 'octets' || this.#state === 'trailer')
      this.counts.incomplete++;
    this.#held.clear();
    this.#state = 'between';
  }

  /**
   * Holds bytes of a trailer frame. One byte past the limit is held so a CR just before the LF (CRLF) is not
   * taken for a message byte; anything longer is oversize, and the rest of the frame is skipped.
   */
  #hold(bytes: Buffer, start: number, end: number, out: FrameSink): void {
    const n = end - start;
    if (n <= 0) return;
    const room = this.#max + 1 - this.#held.length;
    if (n <= room) {
      this.#held.append(bytes, start, end);
      if (this.#gone) return;
      if (this.#held.length === this.#max + 1 && bytes[end - 1] !== CR) this.#trailerOversize(out);
      return;
    }
    this.#held.append(bytes, start, start + room);
    if (this.#gone) return;
    this.#trailerOversize(out);
  }

  #trailerOversize(out: FrameSink): void {
    this.#oversize(out);
    this.#state = 'skip-trailer';
  }

  #endTrailerFrame(lf: boolean, out: FrameSink, digits?: string): void {
    // Digits past the limit would be cut from the message anyway (it is oversize): they are not held.
    if (digits !== undefined) this.#held.append(Buffer.from(digits.slice(0, this.#max + 1), 'latin1'));
    if (this.#gone) return;
    let message = this.#held.take();
    if (lf && message.length > 0 && message[message.length - 1] === CR) message = message.subarray(0, -1);
    if (message.length > this.#max) {
      // Held one byte past the limit, which was not the CR of a CRLF after all.
      this.counts.oversize++;
      if (!this.#drop) out(message, 0, this.#max, true);
    } else if (message.length > 0) out(message, 0, message.length, false);
    this.#state = 'between';
  }

  /** The held message cut to the limit, counted, and delivered flagged unless oversize messages are dropped. */
  #oversize(out: FrameSink): void {
    const message = this.#held.take();
    this.counts.oversize++;
    if (!this.#drop) out(message, 0, Math.min(this.#max, message.length), true);
  }
}

/** A sink keeping each message as a Buffer of its own (push and end, for callers that hold frames). */
function collectInto(out: Frame[]): FrameSink {
  return (bytes, start, end, truncated) => {
    out.push({ message: Buffer.from(bytes.subarray(start, end)), truncated });
  };
}

/** The index of the next LF or NUL at or after `from`, or -1. */
function findTrailer(chunk: Buffer, from: number): number {
  const lf = chunk.indexOf(LF, from);
  const nul = chunk.indexOf(NUL, from);
  if (lf === -1) return nul;
  if (nul === -1) return lf;
  return Math.min(lf, nul);
}
