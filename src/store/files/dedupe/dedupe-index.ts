// The files backend's DedupeIndex (DESIGN 10) over this process's own window: a single process's, or the
// primary's one window on behalf of every worker (src/cluster/ipc-dedupe.ts).
import type { Logger } from 'pino';
import type { DedupeClaim, DedupeIndex } from '../../store.js';
import { type DedupeWindow, Reservation } from './dedupe-window.js';

/** The window of this process (a single process, or the primary on behalf of its workers). */
export function localDedupeIndex(window: DedupeWindow, now: () => number, logger: Logger): DedupeIndex {
  let evictedLogged = 0;
  return {
    claim(keys, ids) {
      const at = now();
      const firstIds: (string | null)[] = new Array(ids.length);
      let waits: Promise<void>[] | null = null;
      const reservation = new Reservation();
      // One synchronous pass: a delivery only ever waits for reservations made before it, so never in a cycle.
      for (let i = 0; i < ids.length; i++) {
        const key = keys[i] ?? null;
        const hit = key === null ? null : window.claim(key, ids[i] as string, reservation, at);
        firstIds[i] = hit === null ? null : hit.id;
        // The same record twice in this append: stored once, with this append.
        if (hit?.pending && hit.pending !== reservation) {
          waits ??= [];
          waits.push(hit.pending.wait());
        }
      }
      const claim: DedupeClaim = {
        firstIds,
        settle(error) {
          window.release(reservation, error === null);
          reservation.settle(error);
          if (window.evicted > evictedLogged) {
            logger.warn(
              { forgottenKeys: window.evicted - evictedLogged, windowMs: window.windowMs },
              'the dedupe window is full: the oldest keys were forgotten before the window ended',
            );
            evictedLogged = window.evicted;
          }
        },
      };
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
