// Deduplication under `serve --workers` (files backend): the primary holds the one dedupe window and every
// worker claims its keys there, so a retry is recognised whichever worker it reaches. A claim's keys stay
// reserved until the worker says its records are durable (or failed); a worker that dies releases them.

import { ThreatcolError } from '../errors.js';
import type { DedupeClaim, DedupeIndex } from '../store/dedupe-index.js';
import type { PrimaryMessage, WorkerMessage } from './messages.js';

type Reply = Extract<PrimaryMessage, { tc: 'dedupe-claimed' }>;

/** The worker's side: an index whose every claim is a round trip to the primary. */
export class IpcDedupeIndex implements DedupeIndex {
  private readonly waiting = new Map<number, (reply: Reply | null) => void>();
  private next = 0;
  private connected = true;

  constructor(private readonly send: (message: WorkerMessage) => void) {}

  claim(keys: readonly (string | null)[], ids: readonly string[]): Promise<DedupeClaim> {
    if (!this.connected) return Promise.reject(gone());
    const req = ++this.next;
    return new Promise<DedupeClaim>((resolve, reject) => {
      this.waiting.set(req, (reply) => {
        if (reply === null) return reject(gone());
        if ('error' in reply) {
          return reject(new ThreatcolError('UNAVAILABLE', reply.error, { headers: { 'Retry-After': '1' } }));
        }
        resolve({
          firstIds: reply.firstIds,
          settle: (error) => this.send({ tc: 'dedupe-settle', req, error: error ? error.message : null }),
        });
      });
      this.send({ tc: 'dedupe-claim', req, keys: [...keys], ids: [...ids] });
    });
  }

  /** The primary's answer to a claim. */
  onReply(reply: Reply): void {
    const resolve = this.waiting.get(reply.req);
    this.waiting.delete(reply.req);
    resolve?.(reply);
  }

  /** The primary is gone: every claim waiting for it fails (503), and so does every later one. */
  disconnected(): void {
    this.connected = false;
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
  }
}

function gone(): ThreatcolError {
  return new ThreatcolError('UNAVAILABLE', 'the primary process is gone; retry shortly', {
    headers: { 'Retry-After': '1' },
  });
}

/** The primary's side: answers the workers' claims from its own index and tracks them until settled. */
export class DedupeBroker {
  /** Open claims by worker slot, then by the worker's request number. */
  private readonly open = new Map<number, Map<number, DedupeClaim>>();

  constructor(private readonly index: DedupeIndex) {}

  onClaim(
    slot: number,
    message: Extract<WorkerMessage, { tc: 'dedupe-claim' }>,
    reply: (m: Reply) => void,
  ): void {
    const answer = (claim: DedupeClaim) => {
      let claims = this.open.get(slot);
      if (!claims) {
        claims = new Map();
        this.open.set(slot, claims);
      }
      claims.set(message.req, claim);
      reply({ tc: 'dedupe-claimed', req: message.req, firstIds: [...claim.firstIds] });
    };
    try {
      const pending = this.index.claim(message.keys, message.ids);
      if (pending instanceof Promise) {
        pending.then(answer, (error: Error) =>
          reply({ tc: 'dedupe-claimed', req: message.req, error: error.message }),
        );
      } else answer(pending);
    } catch (error) {
      reply({ tc: 'dedupe-claimed', req: message.req, error: (error as Error).message });
    }
  }

  onSettle(slot: number, message: Extract<WorkerMessage, { tc: 'dedupe-settle' }>): void {
    const claims = this.open.get(slot);
    const claim = claims?.get(message.req);
    if (!claim) return;
    claims?.delete(message.req);
    claim.settle(message.error === null ? null : new Error(message.error));
  }

  /** A worker exited: what it had not stored is released, so a retry is stored by someone else. */
  workerGone(slot: number): void {
    const claims = this.open.get(slot);
    this.open.delete(slot);
    for (const claim of claims?.values() ?? [])
      claim.settle(new Error(`worker ${slot} exited while storing`));
  }
}
