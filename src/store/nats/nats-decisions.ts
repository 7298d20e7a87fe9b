// The NATS backend's decisions: one key per entry (`block.<network>`, `feed.<name>`, ...) in the KV bucket
// `blocklist.bucket`, so every collector of a cluster reads, serves and watches the same blocks and feeds.
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { KV, KvEntry } from '@nats-io/kv';
import { ThreatcolError } from '../../errors.js';
import {
  applyEntry,
  DECISION_KINDS,
  type DecisionChange,
  type DecisionKind,
  type DecisionsState,
  type DecisionsStore,
  emptyDecisions,
  hasShape,
  MAP_OF,
  stillHeld,
} from '../decisions.js';
import { lastEntries, readQuietMs, readWithRetries, unavailableRead } from './bucket-read.js';
import { decodeToken, encodeToken } from './names.js';
import { watchBucket } from './watch-bucket.js';

/**
 * The order a batch is written in, each group acknowledged before the next is sent. The keys of a batch are
 * separate puts: a node lost between two leaves part of it stored, and the engine decides the batch again
 * from what it reads back. Blocks go before the offences that count them (an offence stored without its block
 * would be taken for an earlier block, and the block made again repeatFactor times longer); a removal's
 * `cleared` before the removal (a block gone without it could be made again from the records that made it).
 */
const WRITE_ORDER: readonly (readonly DecisionKind[])[] = [
  ['cleared'],
  ['block', 'allow', 'feed', 'fetch', 'rule'],
  ['offence'],
];

/** Conditional changes (a read, then a write each) in flight at once. */
const CONDITIONAL_AT_ONCE = 256;

export function createNatsDecisions(options: {
  /** The bucket's name (for messages). */
  name: string;
  /**
   * Opens the bucket (creating it when missing) on a client whose requests give up after `requestTimeoutMs`:
   * reads open it with a short one (a request lost in an election is asked again), writes with waitMs.
   */
  open: (requestTimeoutMs: number) => Promise<KV>;
  /**
   * How long a read waits, in all, for a cluster that does not answer (nats.publishTimeoutMs): through an
   * election it is tried again, then it fails UNAVAILABLE. A write waits this long for each acknowledgement.
   */
  waitMs: number;
  /** Why NATS cannot be used now, when the connection is down (for the error's message); else null. */
  why?: () => string | null;
  /** A full re-read now and then and after a watcher failure, besides the live watch (default 15 s). */
  rereadIntervalMs?: number;
}): DecisionsStore {
  /** One try may go this long without an answer (a request lost while the cluster moves its leaders). */
  const quietMs = readQuietMs(options.waitMs);
  /** The bucket for reads and watches, and for writes and the lease, each opened once (again after a failure). */
  const reads = openOnce(() => options.open(quietMs));
  const writes = openOnce(() => options.open(options.waitMs));

  /** Every entry, read through an election of the cluster's leaders (bucket-read.ts: UNAVAILABLE after waitMs). */
  function readAll(removals?: Map<string, number>): Promise<DecisionsState> {
    return readWithRetries({
      open: reads,
      once: (kv, answered, signal) => readOnce(kv, answered, signal, removals),
      waitMs: options.waitMs,
      unavailable,
    });
  }

  /** Every entry (bucket-read.ts); `removals`, when given, gets each removed key's removal time (its marker's). */
  async function readOnce(
    kv: KV,
    answered: () => void,
    signal: AbortSignal,
    removals?: Map<string, number>,
  ): Promise<DecisionsState> {
    const state = emptyDecisions();
    removals?.clear();
    await lastEntries(kv, (entry) => take(state, entry, removals), answered, signal);
    return state;
  }

  /** Resolves with `promise`, or rejects when the deadline passes first. */
  const unavailable = unavailableRead(options.name, options.why);

  /** Writes a batch in WRITE_ORDER, each group's puts at once; the conditional changes skipped. */
  async function write(changes: readonly DecisionChange[]): Promise<DecisionChange[]> {
    const kv = await writes();
    const skipped: DecisionChange[] = [];
    for (const kinds of WRITE_ORDER) {
      const group = changes.filter((change) => kinds.includes(change.kind));
      // A conditional change is a read and a write: a clean-up of many ended blocks at once (an attack's
      // thousands ending together) asks CONDITIONAL_AT_ONCE of them at a time, not every read at once.
      const conditional = group.filter((change) => change.ifStill !== undefined);
      let next = 0;
      let failed = false;
      const writeInTurn = async () => {
        try {
          // After a failure (the write fails whole), none more is asked.
          while (!failed && next < conditional.length) {
            const change = conditional[next++] as DecisionChange;
            if (!(await writeIfStill(kv, change))) skipped.push(change);
          }
        } catch (error) {
          failed = true;
          throw error;
        }
      };
      await Promise.all([
        ...group
          .filter((change) => change.ifStill === undefined)
          .map((change) => {
            const key = entryKey(change.kind, change.key);
            return change.value === null ? kv.purge(key) : kv.put(key, JSON.stringify(change.value));
          }),
        ...Array.from({ length: Math.min(CONDITIONAL_AT_ONCE, conditional.length) }, writeInTurn),
      ]);
    }
    return skipped;
  }

  return {
    read: () => readAll(),

    async readWithRemovals() {
      const removals = new Map<string, number>();
      return { state: await readAll(removals), removals };
    },

    async apply(changes) {
      try {
        return await write(changes);
      } catch (error) {
        if (error instanceof ThreatcolError) throw error;
        throw unavailable('cannot write the decisions', error);
      }
    },

    async lease(name, holder, ttlMs) {
      const kv = await writes();
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
      const state = emptyDecisions();
      return watchBucket({
        bucket: reads,
        // Taken into the state watchers hold, entry by entry: the periodic re-read finds nothing new most of the
        // time, and then signals no change (each feed would be rendered again, its blocks being new objects).
        reread: async () => takeRead(state, await readAll()),
        take: (entry) => take(state, entry),
        changed: () => onState(state),
        onError,
        rereadIntervalMs: options.rereadIntervalMs ?? 15_000,
      });
    },
  };
}

/**
 * Writes (or, `value` null, purges) the change's key only while it holds `ifStill` (null: no entry; an entry not of
 * its kind's shape counts as none, as readers leave it out): its entry read and compared, and the write made on the
 * condition that nothing was written to it since that read (the stream's last sequence of its subject). Whether
 * it was written (false: skipped).
 */
async function writeIfStill(kv: KV, change: DecisionChange): Promise<boolean> {
  const key = entryKey(change.kind, change.key);
  const { value, ifStill } = change;
  const entry = await kv.get(key);
  const present = entry !== null && entry.operation === 'PUT';
  let held: unknown;
  if (present) {
    try {
      const read: unknown = entry.json();
      if (hasShape(change.kind, read)) held = read;
    } catch {
      // not JSON: none, as for a reader
    }
  }
  if (!stillHeld(held, ifStill)) return false;
  try {
    if (value === null) {
      if (present) await kv.purge(key, { previousSeq: entry.revision });
    } else if (entry === null) await kv.create(key, JSON.stringify(value));
    else await kv.update(key, JSON.stringify(value), entry.revision);
    return true;
  } catch (error) {
    // Written between the read and the write: the newer entry stays.
    if (
      error instanceof JetStreamApiError &&
      (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
        error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
    )
      return false;
    throw error;
  }
}

/** `block.<token>`: the kind, then the key as one token (names.ts). */
function entryKey(kind: DecisionKind, key: string): string {
  return `${kind}.${encodeToken(key)}`;
}

/**
 * Brings `state` to what a full read gave: only the entries that differ are set or removed, so an entry the read
 * found as it was stays the same object and its kind's change number (DecisionsState.changed) stays. Whether any
 * entry changed.
 */
function takeRead(state: DecisionsState, read: DecisionsState): boolean {
  let changed = false;
  for (const kind of DECISION_KINDS) {
    const held = state[MAP_OF[kind]] as Map<string, unknown>;
    const fresh = read[MAP_OF[kind]] as Map<string, unknown>;
    for (const [key, value] of fresh) {
      if (sameJson(held.get(key), value)) continue;
      applyEntry(state, kind, key, value);
      changed = true;
    }
    for (const key of held.keys()) {
      if (fresh.has(key)) continue;
      applyEntry(state, kind, key, null);
      changed = true;
    }
  }
  return changed;
}

/** Whether two values parsed from JSON are the same (objects by their keys, whatever the keys' order). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    keys++;
  }
  for (const _ in y) keys--;
  return keys === 0;
}

function take(state: DecisionsState, entry: KvEntry, removals?: Map<string, number>): void {
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
  } else removals?.set(`${kind} ${key}`, entry.created.getTime());
  applyEntry(state, kind, key, value);
}

/** `open()` called once, and again at the next call after it failed. */
function openOnce<T>(open: () => Promise<T>): () => Promise<T> {
  let opened: Promise<T> | null = null;
  return () => {
    if (opened === null) {
      const opening = open();
      opened = opening;
      opening.catch(() => {
        if (opened === opening) opened = null;
      });
    }
    return opened;
  };
}
