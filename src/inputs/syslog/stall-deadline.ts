// syslog.stallTimeoutMs: a sender that holds a frame unfinished, or (RELP) leaves its answers unread, is cut off.
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * A clock that runs while the sender owes progress on one thing (the frame in progress, the answers written to
 * it) and calls `expire` once it has owed that one thing for `timeoutMs`. Something new owed restarts it; nothing
 * owed stops it. One timer at most, re-armed only when it fires, so telling it on every read costs no timer.
 */
export class StallDeadline {
  readonly #timeoutMs: number;
  readonly #expire: () => void;
  #key: number | null = null;
  #since = 0;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(timeoutMs: number, expire: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#expire = expire;
  }

  /** What the sender owes now: `key` names it (the same key keeps the clock running), null is nothing. */
  owe(key: number | null): void {
    if (this.#stopped) return;
    if (key !== this.#key) {
      this.#key = key;
      this.#since = performance.now();
    }
    if (key !== null && this.#timer === null) this.#arm(this.#timeoutMs);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#check(), Math.max(1, Math.ceil(ms)));
    this.#timer.unref();
  }

  #check(): void {
    this.#timer = null;
    if (this.#stopped || this.#key === null) return;
    const left = this.#since + this.#timeoutMs - performance.now();
    if (left > 0) {
      this.#arm(left);
      return;
    }
    this.stop();
    this.#expire();
  }
}

/** What a stream reader tells of the frame in progress (the syslog framer, the RELP frame reader). */
export interface FrameProgress {
  readonly midFrame: boolean;
  readonly framesStarted: number;
}

/**
 * Closes `socket` when one frame stays unfinished for `timeoutMs` while the socket is read: the clock runs from
 * the frame's first byte, whatever trickles after it, and not while the connection is paused for backpressure
 * (the sender is not at fault then; it starts again when reading resumes). Listens after the connection's own
 * reader, so it sees what that read did. Returns what the connection calls each time it pauses or resumes the
 * socket outside a read (a store's answer): no data event tells the clock then.
 */
export function closeStalledFrames(
  socket: Socket,
  frames: FrameProgress,
  timeoutMs: number,
  closing: () => void,
): () => void {
  const deadline = new StallDeadline(timeoutMs, () => {
    closing();
    socket.destroy();
  });
  const progress = (): void => {
    deadline.owe(frames.midFrame && !socket.isPaused() ? frames.framesStarted : null);
  };
  socket.on('data', progress);
  socket.once('close', () => deadline.stop());
  return progress;
}
