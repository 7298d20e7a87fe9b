// The files backend's DedupeIndex (DESIGN 10) over this process's own window: a single process's, or the
// primary's one window on behalf of every worker (src/cluster/ipc-dedupe.ts).
import type { Logger } from 'pino';
import type { DedupeClaim, DedupeIndex } from '../../store.js';
import { type DedupeWindow, Reservation } from './dedupe-window.js';

/** What the claims of one index share: the window and the warning about keys it forgot early. */
class WindowState {
  private evictedLogged = 0;

  constructor(
    readonly window: DedupeWindow,
    private readonly logger: Logger,
  ) {}

  warnIfEvicted(): void {
    const { window } = this;
    if (window.evicted <= this.evictedLogged) return;
    this.logger.warn(
      { forgottenKeys: window.evicted - this.evictedLogged, windowMs: window.windowMs },
      'the dedupe window is full: the oldest keys were forgotten before the window ended',
    );
    this.evictedLogged = window.evicted;
  }
}

/**
 * An append's claim and its reservation in one object: it lives until the sync, and each object (or closure)
 * that does is copied by the young-generation collector, so the claim is not a literal with a closure beside it.
 */
class WindowClaim extends Reservation implements DedupeClaim {
  constructor(
    readonly firstIds: (string | null)[],
    private readonly state: WindowState,
  ) {
    super();
  }

  override settle(error: Error | null): void {
    this.state.window.release(this, error === null);
    super.settle(error);
    this.state.warnIfEvicted();
  }
}

/** The window of this process (a single process, or the primary on behalf of its workers). */
export function localDedupeIndex(window: DedupeWindow, now: () => number, logger: Logger): DedupeIndex {
  const state = new WindowState(window, logger);
  return {
    claim(keys, ids) {
      const at = now();
      const claim = new WindowClaim(new Array(ids.length), state);
      const { firstIds } = claim;
      let waits: Promise<void>[] | null = null;
      // One synchronous pass: a delivery only ever waits for reservations made before it, so never in a cycle.
      for (let i = 0; i < ids.length; i++) {
        const key = keys[i] ?? null;
        const hit = key === null ? null : window.claim(key, ids[i] as string, claim, at);
        firstIds[i] = hit === null ? null : hit.id;
        // The same record twice in this append: stored once, with this append.
        if (hit?.pending && hit.pending !== claim) {
          waits ??= [];
          waits.push(hit.pending.wait());
        }
      }
      if (waits === null) return claim;
      // An identical delivery still in flight: answer only once it is durable (its failure is ours).
      return Promise.all(waits).then(
        () => claim,
        (error: Error) => {
          claim.settle(error);
          throw error;
        },
      );
    },
  };
}
