// Deduplication under `serve --workers` (files backend): the primary holds the one dedupe window and every
// worker claims its keys there, so a retry is recognised whichever worker it reaches. A claim's keys stay
// reserved until the worker says its records are durable (or failed); a worker that dies releases them.
import { ThreatcolError } from '../errors.js';
import type { DedupeClaim, DedupeIndex } from '../store/store.js';
import { IpcRequests } from './ipc-requests.js';
import type { PrimaryMessage, WorkerMessage } from './messages.js';

type Reply = Extract<PrimaryMessage, { tc: 'dedupe-claimed' }>;

/** The worker's side: an index whose every claim is a round trip to the primary. */
export class IpcDedupeIndex implements DedupeIndex {
  /** null: the primary is gone. */
  private readonly requests = new IpcRequests<Reply | null>();

  constructor(private readonly send: (message: WorkerMessage) => void) {}

  async claim(keys: readonly (string | null)[], ids: readonly string[]): Promise<DedupeClaim> {
    let req = 0;
    const reply = await this.requests.ask((n) => {
      req = n;
      this.send({ tc: 'dedupe-claim', req, keys: [...keys], ids: [...ids] });
    });
    if (reply === null) throw gone();
    if ('error' in reply) {
      throw new ThreatcolError('UNAVAILABLE', reply.error, { headers: { 'Retry-After': '1' } });
    }
    return {
      firstIds: reply.firstIds,
      settle: (error) => this.send({ tc: 'dedupe-settle', req, error: error ? error.message : null }),
    };
  }

  /** The primary's answer to a claim. */
  onReply(reply: Reply): void {
    this.requests.answer(reply.req, reply);
  }

  /** The primary is gone: every claim waiting for it fails (503), and so does every later one. */
  disconnected(): void {
    this.requests.close(null);
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
