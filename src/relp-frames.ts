// Splits a RELP byte stream (librelp's framing: `TXNR SP COMMAND SP DATALEN [SP DATA] LF`) into frames.
import { type HeldBudget, HeldBytes } from './held-bytes.js';

export interface RelpFrame {
  /** 0 only for hints; 1-999999999 otherwise (the sender's number, echoed in the answer). */
  txnr: number;
  /** 1-32 ASCII letters: `open`, `syslog`, `close`, ... */
  command: string;
  /** The data, cut to maxDataBytes when `truncated`. */
  data: Buffer;
  /** DATALEN was over maxDataBytes: `data` is its beginning, the rest was read past without being kept. */
  truncated: boolean;
}

/** A stream that breaks the framing: the session cannot resynchronise (RELP has no frame marker) and ends. */
export interface RelpFrameError {
  reason: string;
}

/** librelp's limits: 9 digits each for TXNR and DATALEN, 32 letters for a command. */
const MAX_DIGITS = 9;
const MAX_COMMAND = 32;

const LF = 0x0a;
const SP = 0x20;
const ZERO = 0x30;
const NINE = 0x39;

type State = 'txnr' | 'command' | 'datalen' | 'data' | 'trailer' | 'broken';

const isLetter = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);

/**
 * A streaming reader: push(chunk) gives the frames that chunk completed, and the reason the stream broke, if it
 * did (nothing is read after that). The same bytes give the same frames however they are split into reads, and
 * at most maxDataBytes of a frame's data are held, copied into one buffer when the data spans reads (a byte per
 * read costs a byte): a larger DATALEN is read through, not buffered.
 */
export class RelpFrameReader {
  readonly #max: number;
  #state: State = 'txnr';
  #txnr = 0;
  #command = '';
  #datalen = 0;
  #digits = 0;
  /** The data kept, when it spans reads; when it lies whole in one read, `#inPlace` is that read's slice. */
  readonly #held: HeldBytes;
  #inPlace: Buffer | null = null;
  #kept = 0;
  #framesStarted = 0;
  /** Data bytes of the current frame still to come (kept or read past). */
  #remaining = 0;
  #error: RelpFrameError | null = null;
  /** Let go for the budget (held-bytes.ts): nothing more is read. */
  #gone = false;

  /**
   * `budget`: the bytes every reader sharing it may hold (held-bytes.ts); `evicted` is told when this reader's
   * frame was let go for another's room: nothing more is read (its owner closes the connection).
   */
  constructor(maxDataBytes: number, budget: HeldBudget | null = null, evicted: () => void = () => {}) {
    this.#max = Math.max(0, Math.floor(maxDataBytes));
    this.#held = new HeldBytes(this.#max, budget, () => {
      this.#gone = true;
      this.#state = 'broken';
      evicted();
    });
  }

  /** The connection is gone: what is held is given back (to the budget), and nothing more is read. */
  abandon(): void {
    this.#held.clear();
    this.#inPlace = null;
    this.#state = 'broken';
  }

  /** Inside a frame: its first byte came and it has not ended. */
  get midFrame(): boolean {
    return this.#state !== 'broken' && (this.#state !== 'txnr' || this.#digits > 0);
  }

  /** How many frames have begun: with midFrame, tells whether the frame in progress is still the same one. */
  get framesStarted(): number {
    return this.#framesStarted;
  }

  /** The bytes of the frame in progress held now (its buffer's capacity). */
  get heldBytes(): number {
    return this.#held.capacity;
  }

  get error(): RelpFrameError | null {
    return this.#error;
  }

  push(chunk: Buffer): RelpFrame[] {
    const out: RelpFrame[] = [];
    let i = 0;
    while (i < chunk.length && this.#state !== 'broken') {
      if (this.#state === 'data') {
        const take = Math.min(this.#remaining, chunk.length - i);
        const keep = Math.min(take, this.#max - this.#kept);
        if (keep > 0) {
          // Nothing kept yet and the rest, with the trailer after it, is here: all of it is (keep === take), used
          // where it lies. A frame whose trailer comes in a later read is copied: a slice would pin the whole read
          // outside the budget until then.
          if (this.#kept === 0 && take === this.#remaining && i + take < chunk.length)
            this.#inPlace = chunk.subarray(i, i + keep);
          else {
            this.#held.append(chunk, i, i + keep);
            // Let go for the budget: nothing more is read, not even the frames after it in this read.
            if (this.#gone) break;
          }
          this.#kept += keep;
        }
        this.#remaining -= take;
        i += take;
        if (this.#remaining === 0) this.#state = 'trailer';
        continue;
      }
      const b = chunk[i++] as number;
      switch (this.#state) {
        case 'txnr':
          if (b >= ZERO && b <= NINE && this.#digits < MAX_DIGITS) {
            if (this.#digits === 0) this.#framesStarted++;
            this.#txnr = this.#txnr * 10 + b - ZERO;
            this.#digits++;
          } else if (b === SP && this.#digits > 0) {
            this.#state = 'command';
          } else {
            this.#fail(this.#digits === 0 ? 'a frame must start with its TXNR' : 'bad TXNR');
          }
          break;
        case 'command':
          if (isLetter(b) && this.#command.length < MAX_COMMAND) {
            this.#command += String.fromCharCode(b);
          } else if (b === SP && this.#command !== '') {
            this.#state = 'datalen';
            this.#digits = 0;
          } else {
            this.#fail('bad COMMAND');
          }
          break;
        case 'datalen':
          if (b >= ZERO && b <= NINE && this.#digits < MAX_DIGITS) {
            this.#datalen = this.#datalen * 10 + b - ZERO;
            this.#digits++;
          } else if (this.#digits > 0 && this.#datalen === 0 && b === LF) {
            out.push(this.#complete());
          } else if (this.#digits > 0 && this.#datalen > 0 && b === SP) {
            this.#state = 'data';
            this.#remaining = this.#datalen;
          } else {
            this.#fail('bad DATALEN');
          }
          break;
        case 'trailer':
          if (b === LF) out.push(this.#complete());
          else this.#fail('DATALEN does not match the data: no LF after it');
          break;
      }
    }
    return out;
  }

  #complete(): RelpFrame {
    const frame: RelpFrame = {
      txnr: this.#txnr,
      command: this.#command,
      data: this.#inPlace ?? this.#held.takeOwned(),
      truncated: this.#datalen > this.#kept,
    };
    this.#state = 'txnr';
    this.#txnr = 0;
    this.#command = '';
    this.#datalen = 0;
    this.#digits = 0;
    this.#inPlace = null;
    this.#kept = 0;
    return frame;
  }

  #fail(reason: string): void {
    this.#state = 'broken';
    this.#held.clear();
    this.#inPlace = null;
    this.#error = { reason };
  }
}

/** The highest TXNR (9 digits); the sequence goes on at 1 after it. */
export const MAX_TXNR = 999_999_999;

/** The TXNR a sender uses after `txnr`: the next number, 1 after MAX_TXNR. */
export function nextRelpTxnr(txnr: number): number {
  return txnr >= MAX_TXNR ? 1 : txnr + 1;
}

/**
 * What librelp's server checks of a sender's frames: the first TXNR is 1 and each next one the previous + 1, so
 * a frame lost, repeated or reordered ends the session before it is acted on. Hints (TXNR 0) are outside the count.
 */
export class RelpTxnrSequence {
  #expected: number;

  /** `first`: 1 in a session; tests start elsewhere to reach the wrap. */
  constructor(first = 1) {
    this.#expected = first;
  }

  /** Null when `txnr` is the expected one (counted), else why it breaks the sequence. */
  check(txnr: number): string | null {
    if (txnr === 0) return null;
    if (txnr !== this.#expected) return `TXNR ${txnr} out of sequence: ${this.#expected} expected`;
    this.#expected = nextRelpTxnr(txnr);
    return null;
  }
}

/** One frame as sent: `TXNR SP COMMAND SP DATALEN [SP DATA] LF` (no SP and no data when DATALEN is 0). */
export function encodeRelpFrame(txnr: number, command: string, data: string | Buffer = ''): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const head = `${txnr} ${command} ${body.length}`;
  return body.length === 0
    ? Buffer.from(`${head}\n`, 'latin1')
    : Buffer.concat([Buffer.from(`${head} `, 'latin1'), body, Buffer.from('\n', 'latin1')]);
}
