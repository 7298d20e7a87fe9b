// Pipelined JetStream publishes on one connection: each record goes out with the rest of its event-loop turn,
// with a reply subject of its own under one inbox subscription, and its ack is matched by that subject. No
// request object, promise, timer or Error per record: the client's request() made all four, about half of
// the collector's CPU per record in the batched benchmark.
import {
  createInbox,
  type Msg,
  MsgHdrsImpl,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

/** Who waits for acks: told per record (by its index) how its publish ended. */
export interface AckTarget {
  acked(index: number, seq: number, duplicate: boolean): void;
  /** `transient`: worth publishing again (timeout, no responders, lost connection, no quorum). */
  failed(index: number, reason: string, transient: boolean): void;
}

/**
 * The one header a record carries, encoded straight from its text into Node's pooled buffers: the generic
 * headers' set() and encode() validate, build and copy through a TextEncoder allocation per record. The ids
 * are ours (UUIDs, base64url keys); publish() refuses one with a line break.
 */
class MsgIdHeader extends MsgHdrsImpl {
  constructor(private readonly msgID: string) {
    super();
    this.headers.set('Nats-Msg-Id', [msgID]);
  }

  override encode(): Uint8Array {
    return Buffer.from(`NATS/1.0\r\nNats-Msg-Id: ${this.msgID}\r\n\r\n`);
  }
}

interface Pending {
  subject: string;
  payload: Uint8Array;
  msgID: string;
  target: AckTarget;
  index: number;
  expires: number;
}

/** Unanswered publishes are looked at this often; their timeouts are seconds, so late by at most this. */
const SWEEP_MS = 100;
/** Errors JetStream (or the client) may answer while a leader is elected or a node comes back. */
const TRANSIENT =
  /timeout|no responders|not enabled|disconnect|connection|closed|503|unavailable|no quorum|leader/i;

export class PublishPipeline {
  private readonly inbox: string;
  private readonly sub: Subscription;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;
  /** Publishes of this turn of the event loop, sent together (see publish). */
  private queue: Pending[] = [];
  private flushing: NodeJS.Immediate | null = null;

  constructor(readonly connection: NatsConnection) {
    this.inbox = `${createInbox()}.`;
    this.sub = connection.subscribe(`${this.inbox}*`, { callback: (error, msg) => this.answer(error, msg) });
    // Acks of publishes sent before a disconnect never come: publish those again at once (same message id).
    void this.watchStatus();
    void this.sub.closed.then(() => this.failAll('the NATS connection closed'));
  }

  /**
   * Publishes `payload` on `subject` with header Nats-Msg-Id `msgID` (JetStream's duplicate window), and
   * tells `target` about record `index` once acknowledged, refused, or after `timeoutMs` without answer.
   */
  publish(
    subject: string,
    payload: Uint8Array,
    msgID: string,
    timeoutMs: number,
    target: AckTarget,
    index: number,
  ): void {
    if (this.closed) {
      target.failed(index, 'the NATS connection closed', true);
      return;
    }
    // MsgIdHeader writes the id as given: a line break would end the header early.
    if (msgID.includes('\n') || msgID.includes('\r')) {
      target.failed(index, 'a message id cannot contain a line break', false);
      return;
    }
    this.queue.push({ subject, payload, msgID, target, index, expires: Date.now() + timeoutMs });
    // Sent once the turn's I/O callbacks have run: the client writes to the socket after each callback's
    // microtasks, so concurrent single-record requests would each cost a write here and a wake-up of the
    // server; together they are one write, and their acks come back in few reads.
    this.flushing ??= setImmediate(() => this.send());
  }

  private send(): void {
    this.flushing = null;
    const queue = this.queue;
    this.queue = [];
    for (const p of queue) {
      const token = this.next++;
      try {
        this.connection.publish(p.subject, p.payload, {
          reply: this.inbox + token,
          headers: new MsgIdHeader(p.msgID),
        });
      } catch (error) {
        const reason = (error as Error).message;
        p.target.failed(p.index, reason, TRANSIENT.test(reason));
        continue;
      }
      this.pending.set(token, p);
    }
    if (this.sweeper === null && this.pending.size > 0)
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /** Publishes still waiting for their ack. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Stops listening; whatever still waits is failed as transient (the caller may try another connection). */
  close(): void {
    if (this.closed) return;
    this.failAll('the NATS connection closed');
    this.closed = true;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
    if (!this.sub.isClosed()) this.sub.unsubscribe();
  }

  private answer(error: Error | null, msg: Msg): void {
    if (error) return; // only a permission error would land here; the publishes time out and say so
    const p = this.take(Number(msg.subject.slice(this.inbox.length)));
    if (!p) return; // timed out already, or failed at a disconnect: the record was published again
    if (msg.data.length === 0) {
      // A status without body: 503 is "no responders" (no stream listens on the subject yet, or no leader).
      const code = msg.headers?.code ?? 0;
      p.target.failed(p.index, code === 503 ? 'no responders' : `status ${code}`, code === 503);
      return;
    }
    let ack: { seq?: number; duplicate?: boolean; error?: { code?: number; description?: string } };
    try {
      ack = JSON.parse(msg.string());
    } catch {
      p.target.failed(p.index, 'invalid ack response', true);
      return;
    }
    if (ack.error) {
      const reason = ack.error.description ?? `error ${ack.error.code}`;
      p.target.failed(p.index, reason, ack.error.code === 503 || TRANSIENT.test(reason));
    } else if (typeof ack.seq !== 'number') p.target.failed(p.index, 'invalid ack response', true);
    else p.target.acked(p.index, ack.seq, ack.duplicate === true);
  }

  private take(token: number): Pending | undefined {
    const p = this.pending.get(token);
    if (p) this.pending.delete(token);
    return p;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [token, p] of this.pending) {
      if (p.expires > now) continue;
      this.pending.delete(token);
      p.target.failed(p.index, 'timeout', true);
    }
    if (this.pending.size === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  private failAll(reason: string): void {
    const all = [...this.queue, ...this.pending.values()];
    this.queue = [];
    if (this.flushing !== null) clearImmediate(this.flushing);
    this.flushing = null;
    this.pending.clear();
    for (const p of all) p.target.failed(p.index, reason, true);
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.connection.status()) {
      if (this.closed) break;
      // The reason reaches the sender's 503 body: never the server URL (it may carry credentials).
      if (s.type === 'disconnect') this.failAll('disconnected from NATS');
    }
  }
}
