// JetStream pull requests made by hand for an output's consumer, and the acks of what they deliver. Not the
// client's fetch(): it cannot wait less than 1 s and fails a whole fetch on one message larger than max_bytes,
// and an output needs both bounds exact and every delivered message accounted for (one dropped on the floor
// stays unacknowledged, i.e. invisible, until the consumer's ack_wait).
import {
  createInbox,
  type Msg,
  type NatsConnection,
  nanos,
  type Subscription,
} from '@nats-io/transport-node';

/** One message delivered by the consumer, as pulled. */
export interface PulledMsg {
  /** Stream sequence. */
  readonly seq: number;
  readonly data: Uint8Array;
  /** The ack subject of this delivery. */
  readonly reply: string;
  /** What the server counts against max_bytes besides the body (subject, ack subject, headers), estimated. */
  readonly overhead: number;
}

export interface PullRequest {
  /** At most this many messages. */
  batch: number;
  /** At most this many bytes as the server counts them (at least the message bodies); none when absent. */
  maxBytes?: number;
  /** The server ends the request after this long; 0 = only what is there now. */
  expiresMs: number;
  /** Ends the request early: what was delivered so far is returned. */
  signal?: AbortSignal;
}

/** The consumer is gone (deleted by `replay`/`forget`, or never made): make it again and pull again. */
export class ConsumerGoneError extends Error {}

// Ack protocol bodies (JetStream's, as the client library sends them), encoded once: a batch acks every record,
// not the same four characters encoded again for each.
const ACK = new TextEncoder().encode('+ACK');
const NAK = new TextEncoder().encode('-NAK');
const WORKING = new TextEncoder().encode('+WPI');
/** A request whose end status never came (connection lost): given up this long after its own expiry. */
const LOST_REQUEST_SLACK_MS = 5000;
/**
 * Long requests ask the server for a heartbeat this often while idle; three missed end the request early (the
 * node serving the consumer died), rather than after the request's whole expiry.
 */
const HEARTBEAT_MS = 1000;

/** Reads the stream sequence from an ack subject ($JS.ACK.[domain.hash.]stream.consumer.delivered.seq...). */
export function parseAckSubject(reply: string): { seq: number } | null {
  const tokens = reply.split('.');
  if (tokens[0] !== '$JS' || tokens[1] !== 'ACK') return null;
  const base = tokens.length === 9 ? 2 : tokens.length >= 11 ? 4 : -1;
  if (base < 0) return null;
  const seq = Number(tokens[base + 3]);
  return Number.isSafeInteger(seq) ? { seq } : null;
}

/** The size of a message's header block as sent (NATS/1.0 line, one line per value, blank line). */
function headerBytes(msg: Msg): number {
  if (!msg.headers) return 0;
  let bytes = 12;
  for (const [key, values] of msg.headers) for (const value of values) bytes += key.length + value.length + 4;
  return bytes;
}

interface Pending {
  want: number;
  msgs: PulledMsg[];
  /** `serverDone`: the server ended the request too (status, or the batch full), nothing more can come. */
  finish: (error?: Error, serverDone?: boolean) => void;
  /** Something came from the server (a message, a status, a heartbeat). */
  heard: () => void;
}

/**
 * One consumer's pulls. Each request has its own reply subscription (a delivered message carries its original
 * subject, so only the subscription tells requests apart); it stays a while after its request ended locally,
 * to hand back at once what the server still delivers to it rather than let that wait out ack_wait.
 */
export class OutputPuller {
  private pending: Pending | null = null;
  private readonly lingering = new Set<Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly consumer: string,
  ) {}

  /** One pull request: resolves with what was delivered, in stream order. */
  pull(request: PullRequest): Promise<PulledMsg[]> {
    if (this.pending) throw new Error('one pull at a time');
    const inbox = createInbox();
    return new Promise<PulledMsg[]>((resolve, reject) => {
      let sub: Subscription | null = null;
      const onAbort = () => current.finish();
      const lostAfterMs = request.expiresMs + LOST_REQUEST_SLACK_MS;
      const timer = setTimeout(() => current.finish(), lostAfterMs);
      const heartbeatMs = request.expiresMs >= 3 * HEARTBEAT_MS ? HEARTBEAT_MS : 0;
      let lastHeard = Date.now();
      const watch = heartbeatMs
        ? setInterval(() => {
            // Silence: the node serving the consumer died, or the consumer is gone (a replay deleted it; a pull
            // on it is then answered by nobody): the feed looks up the output's consumer again.
            if (Date.now() - lastHeard > 3 * heartbeatMs)
              current.finish(new ConsumerGoneError(`consumer ${this.consumer}: no heartbeat`));
          }, heartbeatMs)
        : null;
      const current: Pending = {
        want: request.batch,
        msgs: [],
        heard: () => {
          lastHeard = Date.now();
        },
        finish: (error, serverDone = false) => {
          if (this.pending !== current) return;
          this.pending = null;
          clearTimeout(timer);
          if (watch) clearInterval(watch);
          request.signal?.removeEventListener('abort', onAbort);
          if (sub && serverDone) sub.unsubscribe();
          else if (sub) this.linger(sub, lostAfterMs);
          if (error && current.msgs.length === 0) reject(error);
          else resolve(current.msgs);
        },
      };
      this.pending = current;
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const body: Record<string, unknown> = { batch: request.batch };
      if (request.maxBytes !== undefined) body.max_bytes = request.maxBytes;
      if (request.expiresMs > 0) body.expires = nanos(request.expiresMs);
      else body.no_wait = true;
      if (heartbeatMs) body.idle_heartbeat = nanos(heartbeatMs);
      try {
        sub = this.nc.subscribe(inbox, {
          callback: (_error, msg) => this.onMessage(this.pending === current ? current : null, msg),
        });
        this.nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${this.stream}.${this.consumer}`, JSON.stringify(body), {
          reply: inbox,
        });
      } catch (error) {
        current.finish(error as Error);
      }
      if (request.signal?.aborted) current.finish();
    });
  }

  /** Keeps an ended request's subscription until the server's side of it has surely ended too. */
  private linger(sub: Subscription, ms: number): void {
    this.lingering.add(sub);
    const timer = setTimeout(() => {
      this.lingering.delete(sub);
      sub.unsubscribe();
    }, ms);
    timer.unref();
  }

  private onMessage(current: Pending | null, msg: Msg): void {
    current?.heard();
    const info = msg.reply ? parseAckSubject(msg.reply) : null;
    if (!info || !msg.reply) {
      // A status: 404/408 (nothing more, or expired), 409 (max_bytes reached, consumer deleted), 503 (no
      // consumer answers), 100 (heartbeat). Each but the heartbeat ends its request.
      const code = msg.headers?.code ?? 0;
      if (code === 100 || !current) return;
      const description = msg.headers?.description ?? '';
      if (code === 503 || /consumer deleted|consumer not found/i.test(description)) {
        current.finish(new ConsumerGoneError(`consumer ${this.consumer}: ${code} ${description}`), true);
      } else current.finish(undefined, true);
      return;
    }
    if (!current) {
      // Delivered to a request that already ended (aborted, or given up): hand it back for redelivery.
      this.send(msg.reply, NAK);
      return;
    }
    current.msgs.push({
      seq: info.seq,
      data: msg.data,
      reply: msg.reply,
      overhead: msg.subject.length + msg.reply.length + headerBytes(msg),
    });
    if (current.msgs.length >= current.want) current.finish(undefined, true);
  }

  private send(reply: string, body: Uint8Array): void {
    try {
      this.nc.publish(reply, body);
    } catch {
      // Connection closed: the server redelivers after ack_wait.
    }
  }

  /** Acknowledges without waiting for the server (records the output skips: a lost ack only re-delivers them). */
  ack(msg: PulledMsg): void {
    this.send(msg.reply, ACK);
  }

  /**
   * Acknowledges a delivered batch and waits for the server's confirmation. The consumer queues the acks of a
   * connection and handles them in order, so the confirmation of the last means every earlier one was handled:
   * one round trip per batch, not per record (2.5 times the forwarding rate). Should the consumer's leader
   * change in between, an earlier ack may be lost: that record is delivered again, never skipped. nats-server
   * 2.9 confirms before the other nodes have the acks, so a leader killed right after loses confirmed ones too
   * (the batch comes again: test/cluster/nats-output-failover.test.ts); later releases wait for a quorum.
   */
  async ackBatch(msgs: readonly PulledMsg[], timeoutMs: number): Promise<void> {
    const last = msgs.at(-1);
    if (!last) return;
    for (const msg of msgs.slice(0, -1)) this.nc.publish(msg.reply, ACK);
    await this.nc.request(last.reply, ACK, { timeout: timeoutMs });
  }

  /** Hands a message back for immediate redelivery (to this collector or another). */
  nak(msg: PulledMsg): void {
    this.send(msg.reply, NAK);
  }

  /** Restarts the message's ack_wait: the receiver is still working on it. */
  working(msg: PulledMsg): void {
    this.send(msg.reply, WORKING);
  }

  close(): void {
    this.pending?.finish();
    for (const sub of this.lingering) sub.unsubscribe();
    this.lingering.clear();
  }
}
