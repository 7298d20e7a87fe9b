// Who decides whether a keyed record was stored before (files backend, DESIGN 10): the process's own window,
// or, under `serve --workers`, the primary's one window for every worker (src/cluster/ipc-dedupe.ts), so a
// retry that reaches another worker than the first delivery is still recognised.
import type { Logger } from 'pino';
import type { DedupeWindow } from './dedupe-window.js';

/** The outcome of one append's keys: what was stored before, and what this append now has to store. */
export interface DedupeClaim {
  /** Per record: the id stored (or being stored) first, or null when this append stores it. */
  readonly firstIds: readonly (string | null)[];
  /** This append's records are durable (`error` null) or failed; its keys are remembered or released. */
  settle(error: Error | null): void;
}

export interface DedupeIndex {
  /**
   * Claims the keys (null: a record never deduplicated) of an append whose records have `ids`. Resolves once
   * earlier identical deliveries still in flight are durable; rejects with their error if they failed.
   */
  claim(keys: readonly (string | null)[], ids: readonly string[]): DedupeClaim | Promise<DedupeClaim>;
}

/** The window of this process (a single process, or the primary on behalf of its workers). */
export function localDedupeIndex(window: DedupeWindow, now: () => number, logger: Logger): DedupeIndex {
  let evictedLogged = 0;
  return {
    claim(keys, ids) {
      const at = now();
      const firstIds: (string | null)[] = [];
      const reserved: string[] = [];
      const waits: Promise<void>[] = [];
      let finish: (error: Error | null) => void = () => {};
      const done = new Promise<void>((resolve, reject) => {
        finish = (error) => (error ? reject(error) : resolve());
      });
      // A waiter that gives up must not leave an unhandled rejection behind.
      done.catch(() => {});
      // One synchronous pass: a delivery only ever waits for reservations made before it, so never in a cycle.
      for (let i = 0; i < ids.length; i++) {
        const key = keys[i] ?? null;
        const hit = key === null ? null : window.lookup(key, at);
        if (key === null || hit === null) {
          if (key !== null) {
            window.reserve(key, ids[i] as string, done);
            reserved.push(key);
          }
          firstIds.push(null);
          continue;
        }
        firstIds.push(hit.id);
        // The same record twice in this append: stored once, with this append.
        if (hit.pending && hit.pending !== done) waits.push(hit.pending);
      }
      const claim: DedupeClaim = {
        firstIds,
        settle(error) {
          const settledAt = now();
          for (const key of reserved) window.settle(key, error === null, settledAt);
          finish(error);
          if (window.evicted > evictedLogged) {
            logger.warn(
              { forgottenKeys: window.evicted - evictedLogged, windowMs: window.windowMs },
              'the dedupe window is full: the oldest keys were forgotten before the window ended',
            );
            evictedLogged = window.evicted;
          }
        },
      };
      if (waits.length === 0) return claim;
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
