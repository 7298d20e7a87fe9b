// One watched copy of the decisions per serving process (DESIGN 15): the engine, the feeds and the dashboard's
// Blocklist panel all read the state of one watch of the store, never a watch each (each held a whole copy of
// every block: about 400 bytes a block, so hundreds of MB at a million blocks, and on NATS a watcher of the
// bucket and its periodic full read each). What watchers are handed is shared: they read it, never change it.
import type { DecisionsState, DecisionsStore, DecisionsWatch } from '../store/decisions.js';

interface Watcher {
  onState: (state: DecisionsState) => void;
  onError: (error: Error) => void;
}

/**
 * `store` with one watch shared by every `watch()` of the returned store: the first watcher starts it, a later
 * one gets the last state at once, and the last one to stop stops it (and lets the state go). Reads, writes
 * and leases go to `store` as they are.
 */
export function shareDecisionsWatch(store: DecisionsStore): DecisionsStore {
  const watchers = new Set<Watcher>();
  let shared: DecisionsWatch | null = null;
  let last: DecisionsState | null = null;
  return {
    read: () => store.read(),
    apply: (changes) => store.apply(changes),
    lease: (name, holder, ttlMs) => store.lease(name, holder, ttlMs),
    watch(onState, onError) {
      const watcher: Watcher = { onState, onError };
      watchers.add(watcher);
      if (shared === null) {
        shared = store.watch(
          (state) => {
            last = state;
            for (const w of [...watchers]) w.onState(state);
          },
          (error) => {
            for (const w of [...watchers]) w.onError(error);
          },
        );
      } else if (last !== null) onState(last);
      return {
        stop() {
          if (!watchers.delete(watcher) || watchers.size > 0) return;
          shared?.stop();
          shared = null;
          last = null;
        },
      };
    },
  };
}
