// The NATS backend's decisions: one key per entry (`block.<network>`, `feed.<name>`, ...) in the KV bucket
// `blocklist.bucket`, so every collector of a cluster reads, serves and watches the same blocks and feeds.
import type { KV, KvEntry } from '@nats-io/kv';
import {
  applyEntry,
  DECISION_KINDS,
  type DecisionKind,
  type DecisionsState,
  type DecisionsStore,
  emptyDecisions,
} from '../decisions.js';
import { decodeToken, encodeToken } from './names.js';

/** Reads of every entry tried this many times when one times out. */
const READ_ATTEMPTS = 3;

export function createNatsDecisions(options: {
  bucket: () => Promise<KV>;
  /** A full re-read now and then and after a watcher failure, besides the live watch (default 15 s). */
  rereadIntervalMs?: number;
}): DecisionsStore {
  /**
   * With a node of the cluster just killed, one listing in a few times out (nats-server loses the request of
   * the listing's consumer while it moves its leaders): a `block list` then failed. Tried again, it answers.
   */
  async function readAll(): Promise<DecisionsState> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await readOnce();
      } catch (error) {
        if (attempt >= READ_ATTEMPTS || !/timeout/i.test((error as Error).message)) throw error;
      }
    }
  }

  async function readOnce(): Promise<DecisionsState> {
    const kv = await options.bucket();
    const state = emptyDecisions();
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    await Promise.all(
      keys.map(async (key) => {
        const entry = await kv.get(key);
        if (entry) take(state, entry);
      }),
    );
    return state;
  }

  return {
    read: readAll,

    async apply(changes) {
      const kv = await options.bucket();
      await Promise.all(
        changes.map((change) => {
          const key = entryKey(change.kind, change.key);
          return change.value === null ? kv.purge(key) : kv.put(key, JSON.stringify(change.value));
        }),
      );
    },

    async lease(name, holder, ttlMs) {
      const kv = await options.bucket();
      const key = `lease.${encodeToken(name)}`;
      const now = Date.now();
      const value = JSON.stringify({ holder, until: new Date(now + ttlMs).toISOString() });
      const entry = await kv.get(key);
      try {
        if (entry === null || entry.operation !== 'PUT') {
          // Never taken (or purged): the first to create it has it.
          if (entry === null) await kv.create(key, value);
          else await kv.update(key, value, entry.revision);
          return true;
        }
        let current: { holder?: unknown; until?: unknown } = {};
        try {
          current = entry.json();
        } catch {
          // Not a lease: taken over below.
        }
        const held =
          current.holder !== holder && typeof current.until === 'string' && Date.parse(current.until) > now;
        if (held) return false;
        await kv.update(key, value, entry.revision);
        return true;
      } catch {
        // Another collector wrote it first (create or revision conflict): it has the lease this round.
        return false;
      }
    },

    watch(onState, onError) {
      let stopped = false;
      let state = emptyDecisions();
      let stopWatcher: (() => void) | null = null;
      let scheduled = false;
      /** Coalesces a burst of entries (the watcher's first replay, one engine batch) into one onState. */
      const schedule = () => {
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          if (!stopped) onState(state);
        });
      };
      const reread = async () => {
        state = await readAll();
        schedule();
      };
      const run = async () => {
        while (!stopped) {
          try {
            const kv = await options.bucket();
            await reread();
            const watcher = await kv.watch({ key: '>' });
            stopWatcher = () => watcher.stop();
            if (stopped) watcher.stop();
            for await (const entry of watcher) {
              take(state, entry);
              schedule();
            }
          } catch (error) {
            if (!stopped) onError(error as Error);
          }
          stopWatcher = null;
          if (!stopped) await new Promise((resolve) => setTimeout(resolve, 500));
        }
      };
      void run();
      const timer = setInterval(() => void reread().catch(() => {}), options.rereadIntervalMs ?? 15_000);
      timer.unref();
      return {
        stop() {
          stopped = true;
          clearInterval(timer);
          stopWatcher?.();
        },
      };
    },
  };
}

/** `block.<token>`: the kind, then the key as one token (names.ts). */
function entryKey(kind: DecisionKind, key: string): string {
  return `${kind}.${encodeToken(key)}`;
}

function take(state: DecisionsState, entry: KvEntry): void {
  const dot = entry.key.indexOf('.');
  const kind = entry.key.slice(0, dot) as DecisionKind;
  if (dot === -1 || !DECISION_KINDS.includes(kind)) return;
  const key = decodeToken(entry.key.slice(dot + 1));
  let value: unknown = null;
  if (entry.operation === 'PUT') {
    try {
      value = entry.json();
    } catch {
      value = null;
    }
  }
  applyEntry(state, kind, key, value);
}
