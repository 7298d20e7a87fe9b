// What the decisions room (src/decisions/) keeps (DESIGN 15): blocks, allow entries, feeds and the engine's
// bookkeeping, one entry per key, behind one interface both backends implement (files: a snapshot and a journal
// of changes, under a lock; NATS: one KV key per entry, so every collector of a cluster serves the same feed).
import { inWriterForm } from './stored-time.js';

/** One blocked network: the unit an address falls in (IPv4 /32, IPv6 /64 by default). */
export interface Block {
  /** The unit as a CIDR: `198.51.100.7/32`, `2001:db8:1:2::/64`. */
  address: string;
  /** The rule that made it, or `manual`. */
  rule: string;
  reason: string;
  /** ISO 8601: when it was made. */
  since: string;
  /** ISO 8601: when it ends (stored, never recomputed from a restart's time). */
  until: string;
  /** Highest criticality of the records that made it (manual: 4). */
  criticality: number;
  /** Records (counted up to the rule's minRecords) and distinct sensors in its window when it was last written. */
  records: number;
  sensors: string[];
  /** Who made it: the CLI's user for a manual block, null for a rule. */
  who: string | null;
}

/** A network never blocked. */
export interface AllowEntry {
  network: string;
  reason: string;
  since: string;
  /** ISO 8601, or null: for good. */
  until: string | null;
  who: string | null;
}

export const FEED_FORMATS = ['plain', 'paloalto', 'fortinet', 'json', 'nftables', 'mikrotik'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

/** A feed: a URL with its own Basic credentials serving the active blocks in one firewall's format. */
export interface FeedEntry {
  name: string;
  format: FeedFormat;
  /** The password's hash (`sha256:<hex>`, keys.ts); the password is shown once. */
  passwordHash: string;
  /** Most entries served (the highest criticality, then the newest, are kept); null: no cap. */
  maxEntries: number | null;
  family: 'any' | 'ipv4' | 'ipv6';
  /** Served only to clients in these networks (others: 403); absent or empty: to any address. */
  from?: string[];
  /** Neighbouring blocks merged into the fewest CIDRs. */
  aggregate?: boolean;
  createdAt: string;
  rotatedAt: string | null;
}

/** `block remove` of a network: records about it received at or before `at` no longer count. */
export interface ClearedEntry {
  address: string;
  at: string;
  /**
   * True when the mark is a block by hand's own end (the clean-up's), not a `block remove`: `store migrate`
   * carries a removal to the target, never an end (the target ends its copy of the block by itself).
   */
  ended?: true;
}

/** An address blocked before: a new block within 30 days of `last` lasts repeatFactor^blocks longer. */
export interface OffenceEntry {
  address: string;
  blocks: number;
  last: string;
  /**
   * When its last block ended, written by the clean-up as it removes the ended block (absent while the block is
   * in store, and in entries written before it was kept): a record received before it was read while that block
   * was in force, and makes no new block when read again (decisions/engine.ts, decide).
   */
  until?: string;
}

/** A feed's last fetch (written at most once a minute per collector, and when its status changes). */
export interface FetchEntry {
  feed: string;
  at: string;
  address: string;
  status: number;
}

/**
 * What a rule did lately (the engine's, written at most once a minute per rule, and at once when it blocks):
 * `check` warns about a rule that blocked nothing for a week while records met its criteria.
 */
export interface RuleEntry {
  rule: string;
  /** When the engine first kept this rule's history. */
  since: string;
  /** Received time of the newest record that met the rule's criteria (criticality, sensors, endpoints, threat). */
  lastMatch: string | null;
  /** Time of the newest record that made or extended a block by this rule. */
  lastBlock: string | null;
}

export interface DecisionsState {
  blocks: Map<string, Block>;
  allow: Map<string, AllowEntry>;
  feeds: Map<string, FeedEntry>;
  cleared: Map<string, ClearedEntry>;
  offences: Map<string, OffenceEntry>;
  fetches: Map<string, FetchEntry>;
  rules: Map<string, RuleEntry>;
  /**
   * Each kind's last change (applyEntry), as a number from one sequence the whole process shares: the same number
   * twice means no change between, whatever state object each was read from. A feed is rendered again when its
   * blocks or allow entries change, not at each fetch noted (feed-service.ts).
   */
  changed: Record<DecisionKind, number>;
}

/**
 * One entry written (value) or removed (null). `ifStill`: the entry as its writer last saw it (null: none); the
 * store makes the change only while it holds that still (JSON-equal; null: no entry), in the same step as the
 * check, and skips it otherwise. The engine's clean-up removes ended blocks and expired allow entries so, and
 * writes an ended block's marks so, and the engine extends a block in force so: a `block add`, `block remove` or
 * `allow add` of the same network written meanwhile, not yet shown to it, stays.
 */
export type DecisionChange =
  | Change<'block', Block>
  | Change<'allow', AllowEntry>
  | Change<'feed', FeedEntry>
  | Change<'cleared', ClearedEntry>
  | Change<'offence', OffenceEntry>
  | Change<'fetch', FetchEntry>
  | Change<'rule', RuleEntry>;

type Change<K extends string, V> =
  | { kind: K; key: string; value: V; ifStill?: V | null }
  | { kind: K; key: string; value: null; ifStill?: V };

/** Whether `held` (a stored entry, or undefined: none) is what a change's `ifStill` asks for (null: none). */
export function stillHeld(held: unknown, ifStill: unknown): boolean {
  if (ifStill === null) return held === undefined;
  return held !== undefined && JSON.stringify(held) === JSON.stringify(ifStill);
}

/** The entry `state` holds for a kind and key (undefined: none). */
export function heldEntry(state: DecisionsState, kind: DecisionKind, key: string): unknown {
  return (state[MAP_OF[kind]] as Map<string, unknown>).get(key);
}

export type DecisionKind = DecisionChange['kind'];
export const DECISION_KINDS: readonly DecisionKind[] = [
  'block',
  'allow',
  'feed',
  'cleared',
  'offence',
  'fetch',
  'rule',
];

export interface DecisionsWatch {
  stop(): void;
}

/** The decisions of one collector (files) or one cluster (NATS). CLI and daemon both read and write it. */
export interface DecisionsStore {
  /** Every entry now (entries that are not of their kind's shape are left out). */
  read(): Promise<DecisionsState>;
  /**
   * Writes the changes durably, each entry as given (files: a journal line each, appended and fsynced under
   * the lock; NATS: one put or purge per key, acked). Writers of different keys never undo each other; a change
   * with `ifStill` is skipped when the entry changed since its writer saw it. Resolves with the changes skipped.
   */
  apply(changes: readonly DecisionChange[]): Promise<readonly DecisionChange[]>;
  /**
   * read()'s state, and from the same read the entries removed and not written since (`KIND KEY`), each with
   * when it was removed (epoch ms), where the store keeps a mark of each removal (NATS: the marker a removed key
   * keeps in the bucket). Absent where it keeps none (files). `store migrate` run again leaves these removed
   * unless its entry is newer.
   */
  readWithRemovals?(): Promise<{ state: DecisionsState; removals: Map<string, number> }>;
  /**
   * Calls `onState` with the whole state at once, then after every change by anyone, within a second. The
   * state handed over is the watchers' to read, never to change; a backend may hand over the same object each
   * time, changed in place just before the call (files: the process's own writes go straight into it).
   */
  watch(onState: (state: DecisionsState) => void, onError: (error: Error) => void): DecisionsWatch;
  /**
   * Takes or renews the lease `name` for `holder` until `ttlMs` from now; resolves whether `holder` has it (no
   * one else held an unexpired one). Files: always (one collector per data directory); NATS: a compare-and-set
   * key, so of a cluster's collectors one runs the engine and another takes over when its lease runs out.
   */
  lease(name: string, holder: string, ttlMs: number): Promise<boolean>;
}

/**
 * The name of the engine's durable cursor into the record log (Store.outputs): `@` is not allowed in an
 * output's name, so no output can take it, and `outputs list` leaves it out (isOutputName).
 */
export const DECISIONS_CURSOR = '@decisions';

/** Whether a cursor belongs to an output (not to the decisions engine). */
export function isOutputName(name: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(name);
}

export function emptyDecisions(): DecisionsState {
  return {
    blocks: new Map(),
    allow: new Map(),
    feeds: new Map(),
    cleared: new Map(),
    offences: new Map(),
    fetches: new Map(),
    rules: new Map(),
    changed: { block: 0, allow: 0, feed: 0, cleared: 0, offence: 0, fetch: 0, rule: 0 },
  };
}

/** The sequence of DecisionsState.changed. */
let changes = 0;

/** Where each kind's entries are in a DecisionsState. */
export const MAP_OF: Record<DecisionKind, keyof DecisionsState> = {
  block: 'blocks',
  allow: 'allow',
  feed: 'feeds',
  cleared: 'cleared',
  offence: 'offences',
  fetch: 'fetches',
  rule: 'rules',
};

/** Sets or removes one entry in `state`, when its value has its kind's shape (else removes the key). */
export function applyEntry(state: DecisionsState, kind: DecisionKind, key: string, value: unknown): void {
  const map = state[MAP_OF[kind]] as Map<string, unknown>;
  state.changed[kind] = ++changes;
  if (value === null || value === undefined || !hasShape(kind, value)) map.delete(key);
  else map.set(key, value);
}

/**
 * How many blocks are in force at `at` (epoch ms), and the earliest end among them (Infinity: none), for the
 * engine's count (metrics ask often: a scrape after each change) and `check`. Ends in the form the collector
 * writes them, fields in range (stored-time.ts inWriterForm), are compared as text with `at`'s, which orders them
 * as times: a Date.parse per block made a count of 250,000 blocks take 75-140 ms.
 */
export function blocksInForce(blocks: Iterable<Block>, at: number): { count: number; firstEnd: number } {
  const atText = new Date(at).toISOString();
  let count = 0;
  let firstEnd = Number.POSITIVE_INFINITY;
  /** The earliest end in force among those compared as text. */
  let first: string | null = null;
  for (const block of blocks) {
    const until = block.until;
    if (inWriterForm(until)) {
      if (until > atText) {
        count++;
        if (first === null || until < first) first = until;
      }
      continue;
    }
    const ms = Date.parse(until);
    if (ms > at) {
      count++;
      if (ms < firstEnd) firstEnd = ms;
    }
  }
  if (first !== null) firstEnd = Math.min(firstEnd, Date.parse(first));
  return { count, firstEnd };
}

/** The state as change list (for copies and the files backend's document). */
export function decisionEntries(
  state: DecisionsState,
): { kind: DecisionKind; key: string; value: unknown }[] {
  const out: { kind: DecisionKind; key: string; value: unknown }[] = [];
  for (const kind of DECISION_KINDS) {
    for (const [key, value] of state[MAP_OF[kind]] as Map<string, unknown>) out.push({ kind, key, value });
  }
  return out;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isIso = (v: unknown): boolean => isString(v) && !Number.isNaN(Date.parse(v));

/** Anyone who can write the file or the bucket can put anything there: only entries of the right shape count. */
export function hasShape(kind: DecisionKind, value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  switch (kind) {
    case 'block':
      return (
        isString(v.address) &&
        isString(v.rule) &&
        isString(v.reason) &&
        isIso(v.since) &&
        isIso(v.until) &&
        // 0-4 as a record's (a feed's cap ranks blocks by it).
        Number.isInteger(v.criticality) &&
        (v.criticality as number) >= 0 &&
        (v.criticality as number) <= 4 &&
        Number.isInteger(v.records) &&
        Array.isArray(v.sensors) &&
        v.sensors.every(isString) &&
        (v.who === null || isString(v.who))
      );
    case 'allow':
      return (
        isString(v.network) &&
        isString(v.reason) &&
        isIso(v.since) &&
        (v.until === null || isIso(v.until)) &&
        (v.who === null || isString(v.who))
      );
    case 'feed':
      return (
        isString(v.name) &&
        (FEED_FORMATS as readonly unknown[]).includes(v.format) &&
        isString(v.passwordHash) &&
        (v.maxEntries === null || Number.isInteger(v.maxEntries)) &&
        (v.family === 'any' || v.family === 'ipv4' || v.family === 'ipv6') &&
        (v.from === undefined || (Array.isArray(v.from) && v.from.every(isString))) &&
        (v.aggregate === undefined || typeof v.aggregate === 'boolean') &&
        isIso(v.createdAt)
      );
    case 'cleared':
      return isString(v.address) && isIso(v.at) && (v.ended === undefined || v.ended === true);
    case 'offence':
      return (
        isString(v.address) &&
        Number.isInteger(v.blocks) &&
        isIso(v.last) &&
        (v.until === undefined || isIso(v.until))
      );
    case 'fetch':
      return isString(v.feed) && isIso(v.at) && isString(v.address) && Number.isInteger(v.status);
    case 'rule':
      return (
        isString(v.rule) &&
        isIso(v.since) &&
        (v.lastMatch === null || isIso(v.lastMatch)) &&
        (v.lastBlock === null || isIso(v.lastBlock))
      );
  }
}
