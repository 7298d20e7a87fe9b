// The store seam: records, sensors, per-sensor stats and health behind one interface. `openStore(config)`
// (store/open-store.ts) picks the backend (`store.backend`: files in store/files/, or nats in store/nats/);
// nothing else may touch a backend's files, streams or buckets directly.
import type { Logger } from 'pino';
import type { OutputConfig } from '../config/outputs-schema.js';
import type { StoredRecord } from '../records/stored-record.js';
import type { DecisionsStore } from './decisions.js';
import type { FileOps } from './file-ops.js';
import type { RecordHead } from './record-head.js';
import type { SensorRegistry } from './registry.js';

export type { RecordHead } from './record-head.js';

export type Endpoint = StoredRecord['endpoint'];

// Who decides whether a keyed record was stored before (DESIGN 10): the files backend's own window, or, under
// `serve --workers`, the primary's one window for every worker (src/cluster/ipc-dedupe.ts), so a retry that
// reaches another worker than the first delivery is still recognised. NATS dedupes in the stream instead.

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

export interface AppendOptions {
  /**
   * Parallel to `records`: the key that identifies a retried delivery of that record (DESIGN 10), or null
   * when the record is never deduplicated. A record whose key was stored within the dedupe window is not
   * stored again; its first id is returned in its place.
   */
  dedupeKeys?: readonly (string | null)[];
  /**
   * Its `settle` is called once, just before the returned promise settles: null when the records are durable,
   * else the error. The dedupe wrapper passes its claim itself (no closure, no second promise per request), so
   * a RecordLog it wraps must call it on every path (the files backend's does; the NATS backend dedupes itself).
   */
  settled?: { settle(error: Error | null): void };
}

export interface AppendResult {
  /** For each record, in order: its id, or for a duplicate the id stored by the first delivery. */
  ids: string[];
  /** How many of the records were duplicates (not stored again). */
  duplicates: number;
}

/** Appends records durably. One writer per daemon process (or per worker). */
export interface RecordLog {
  /**
   * Resolves once every new record is durable (files: written and fdatasynced; NATS: publish-acked);
   * rejects with a ThreatcolError (UNAVAILABLE, STORE_FAILED) otherwise. All-or-nothing per call.
   */
  append(records: StoredRecord[], options?: AppendOptions): Promise<AppendResult>;
  /** Records accepted but not yet durable (a gauge for metrics and backpressure). */
  readonly queuedRecords: number;
  /** Waits for queued records to become durable, then releases the backend. */
  close(): Promise<void>;
}

/** What a reader keeps: the stored record and its line exactly as stored (for `--json`). */
export interface RecordLine {
  line: string;
  record: StoredRecord;
}

/** Which records a reader returns; every field optional, all given ones must hold. */
export interface RecordFilter {
  sensor?: string;
  endpoint?: Endpoint;
  minCriticality?: number;
  /** Epoch ms: only records received at or after this instant. */
  since?: number;
  /** Epoch ms: only records received before this instant. */
  until?: number;
  /** Only records whose source address is this address or inside this CIDR (IPv4 or IPv6; address-match.ts). */
  src?: string;
  /** Only records whose destination address is this address or inside this CIDR. */
  dst?: string;
  /** Only records whose threat name contains this, ignoring case. */
  threat?: string;
  /** Only records whose source (destination) country is this ISO 3166-1 alpha-2 code, upper case (enrichment). */
  srcCountry?: string;
  dstCountry?: string;
  /** Only records whose source (destination) address is in this AS number (enrichment). */
  srcAsn?: number;
  dstAsn?: number;
  /** Only records stored before the record with this id (ids are time-ordered UUIDv7): the next page back. */
  before?: string;
}

/** Where following resumes. Opaque outside the backend that made it. */
export type RecordCursor = { readonly backend: string } & Readonly<Record<string, unknown>>;

export interface ReadRecentOptions {
  /** How many matching records to return at most, the newest ones (0: none, only the cursor). */
  limit: number;
  filter?: RecordFilter;
  /** Extra predicate beyond `filter` (e.g. a CLI filter a backend cannot index). */
  match?: (record: StoredRecord) => boolean;
  /** Stops the read (it rejects with the signal's reason) within a record of the abort. */
  signal?: AbortSignal;
  /**
   * Looks back through at most this many bytes of stored records (plus one record), then returns what it
   * found: a filter that matches little must not read the whole store.
   */
  maxBytes?: number;
  /** Looks back through at most this many stored records, then returns what it found (as `maxBytes`). */
  maxRecords?: number;
  /**
   * For a `match` that sums what it sees: called after each stretch of records the backend hands to `match`
   * as one, `complete` false when the bound cut it short (its records were seen by `match`, yet the read gives
   * up the stretch: NATS reads a window oldest first, so what it saw of a cut window is not joined to what came
   * after it). The files backend reads newest first, every record's stretch complete: it never calls it.
   */
  window?: (complete: boolean) => void;
}

export interface ReadRecentResult {
  /** The newest matching records, oldest first. */
  records: RecordLine[];
  cursor: RecordCursor;
  /** True when `maxBytes` or `maxRecords` ended the read before `limit` records or the filter's `since`. */
  bounded?: boolean;
}

export interface FollowOptions {
  /** Called with each batch of new matching records, in store order; awaited (backpressure). */
  onRecords: (records: RecordLine[]) => void | Promise<void>;
  signal: AbortSignal;
  filter?: RecordFilter;
  match?: (record: StoredRecord) => boolean;
  /** Fallback polling interval where the backend polls. */
  pollIntervalMs?: number;
}

/** Reads records back: the last N (oldest first in the result), then follows new ones live. */
export interface RecordReader {
  readRecent(options: ReadRecentOptions): Promise<ReadRecentResult>;
  /** Resolves when `signal` aborts. */
  follow(from: RecordCursor, options: FollowOptions): Promise<void>;
  /**
   * Visits every stored record received at or after `since` (epoch ms), oldest first as far as the
   * backend stores them, for aggregations (`threats stats`) and copies (`store migrate`). A visit that
   * returns a promise is awaited before the next record (backpressure). Resolves when done.
   */
  scan(since: number, visit: (record: StoredRecord) => unknown, signal?: AbortSignal): Promise<void>;
  /** Lines or messages this reader has skipped so far because they are not stored records (record-shape.ts). */
  skippedCount(): number;
}

export interface SensorActivity {
  last_seen: string | null;
  /** When its last record was accepted (last_seen counts refused requests of a proven key too). */
  last_accepted?: string | null;
  last_address: string | null;
  records_received: number;
  requests_rejected: number;
  /** Code and time of the last rejected request of this sensor (null when none). */
  last_rejection_code?: string | null;
  last_rejected_at?: string | null;
}

/** A sensor reported silent (src/sensors/): kept until it sends again, so a restart neither repeats nor loses it. */
export interface SensorSilence {
  /** When its expected interval ran out. */
  silent_since: string;
}

/** Per-sensor activity counters. The daemon writes (one writer per collector); the CLI reads the sums. */
export interface SensorStatsStore {
  /** The silences reported and not yet over, per sensor (one cluster-wide set on NATS). */
  readSilences(): Promise<Record<string, SensorSilence>>;
  /**
   * Stores (or with null, clears) one sensor's silence, durably before it resolves. Only the silence watcher
   * writes (the daemon, the primary of --workers, on NATS the holder of the watcher's lease).
   */
  writeSilence(sensor: string, silence: SensorSilence | null): Promise<void>;
  recordAccepted(sensor: string, address: string, records: number, at: string): void;
  /**
   * A rejected request of `sensor`: counted with its code and time. `address` is null when the sender never
   * proved the key (a wrong key under a registered name): then last seen and last address stay as they were,
   * so nobody can make a dead firewall look alive or put their address in the sensor table.
   */
  recordRejected(sensor: string, address: string | null, code: string, at: string): void;
  /** Per sensor: counts summed over every collector sharing the store, latest last-seen/address. */
  read(): Promise<Record<string, SensorActivity>>;
  /** Starts the periodic write of the counters (daemon only). */
  start(intervalMs: number, onError: (error: Error) => void): void;
  /** Writes what is pending and stops the timer. */
  stop(): Promise<void>;
}

export interface StoreHealth {
  /** True when an append would be accepted now. */
  ok: boolean;
  /** Why not, for /readyz, `check` and the logs (never a credential). */
  reason?: string;
}

export interface StoreWriterOptions {
  /** Called once when the log can no longer be trusted (a failed fdatasync): the daemon must stop. */
  onFatal?: (error: Error) => void;
  /** Files backend with `--workers`: this worker's id, part of its segment names (null: single process). */
  workerId?: number | null;
  /** Files backend with `--workers`: how many workers share the configured queue bounds (default 1). */
  workers?: number;
  /**
   * Files backend with `--workers`: the primary's dedupe window, shared by every worker (default: this
   * process's own, rebuilt from the newest segments at open).
   */
  dedupe?: DedupeIndex;
  /**
   * Files backend: how often the writer applies `store.retention` after the run at open (default hourly;
   * 0: never, e.g. a worker that is not the one pruning). NATS maps retention to the stream's limits instead.
   */
  retentionIntervalMs?: number;
  /**
   * Files backend: the outputs as configured now, asked at each retention run, so that one a reload added,
   * enabled or gave another `maxLag` holds from then on and one it removed no longer does (default: the
   * configuration's at open). What an enabled output has not passed is kept, unless its `maxLag` lets it go.
   */
  outputs?: () => Record<string, OutputConfig>;
  /** After each batch is durable: its record count and the time the sync (or publish acks) took (metrics). */
  onBatchSynced?: (records: number, seconds: number) => void;
}

/** What `openStore` needs besides the configuration. Opening a store creates nothing until it is written. */
export interface StoreDeps {
  /** The data directory (files backend: the store itself; every backend: TLS material). */
  dataDir: string;
  logger: Logger;
  now?: () => number;
  /** Files backend: the file operations (tests inject failures). */
  fileOps?: FileOps;
}

/** One backend. CLI commands use registry/reader/stats; only the daemon opens the writer. */
export interface Store {
  readonly backend: 'files' | 'nats';
  readonly registry: SensorRegistry;
  readonly reader: RecordReader;
  readonly stats: SensorStatsStore;
  /** Outputs' durable positions in the record log (DESIGN 13). */
  readonly outputs: OutputCursors;
  /** Blocks, allow entries and feeds (DESIGN 15; store/decisions.ts). */
  readonly decisions: DecisionsStore;
  /** Opens the record writer (daemon only). */
  openRecordLog(options?: StoreWriterOptions): Promise<RecordLog>;
  /**
   * Whether an append would be stored now. `waitMs`: a store still connecting (a CLI command that has just
   * opened it) may take this long to become ready before it is reported not ready.
   */
  health(options?: { waitMs?: number }): Promise<StoreHealth>;
  /** Releases connections and watchers (not the writer: close that first). */
  close(): Promise<void>;
}

// Outputs (DESIGN 13): each output reads the record log from its own durable position and moves it only after
// its receiver acknowledged a batch. Files: a cursor file per output in the data directory; NATS: a durable
// JetStream consumer per output with explicit acks, shared by every collector of a cluster.

/**
 * One record handed to an output: its line as stored, as bytes (a view, no copy: what a receiver that sends
 * the line as it is puts in its body) and as text, its head, and the whole record, parsed when first read.
 */
export interface OutputLine extends RecordLine {
  readonly id: string;
  readonly head: RecordHead;
  /** The stored line's bytes, without its newline. */
  readonly bytes: Buffer;
  /** Their length (without making a view of them). */
  readonly byteLength: number;
}

/** One batch handed to an output: records after its acknowledged position, in store order. */
export interface OutputBatch {
  readonly records: readonly OutputLine[];
  /**
   * Durably records that this batch was delivered: the output's position moves past it (files: the cursor
   * file is written atomically and fsynced; NATS: every message is acked and the ack confirmed). Only after
   * this resolves may the forwarder take the next batch.
   */
  ack(): Promise<void>;
}

export interface OutputFeedOptions {
  /** Output name (validated by the configuration: [A-Za-z0-9_-]{1,64}). */
  name: string;
  /** Only matching records are handed over; the position still moves past the others. */
  match?: (record: RecordHead) => boolean;
  /**
   * How much of each line is checked before it is handed over. 'record' (the default): parsed whole and
   * shape-checked, as every reader does. 'head': for receivers that send the stored line as it is, only the
   * head is read (and checked) when the line has the writer's form (record-head.ts); other lines are parsed.
   */
  check?: 'record' | 'head';
  /** Where a brand-new output starts: 'now' (records stored from now on) or an epoch-ms instant. */
  startAt?: 'now' | number;
  /**
   * A feed that waits out a failing store itself (NATS unreachable, its consumer not made yet) and tries again
   * with backoff says so here: the error at each failed attempt, null once reading works again. The output's
   * status shows it; next() still resolves only with records or at its signal.
   */
  onTrouble?: (error: Error | null) => void;
}

/** An output's read side of the log, from its durable position. One per output per box (DESIGN 13). */
export interface OutputFeed {
  /**
   * The next batch: waits up to `waitMs` for records once the first is there or `maxRecords`/`maxBytes` (line
   * bytes) are reached, whichever is first; waits indefinitely for the first record until `signal` aborts
   * (then resolves with an empty batch). Never returns a record before the previous batch was acked.
   */
  next(options: {
    maxRecords: number;
    maxBytes: number;
    waitMs: number;
    signal: AbortSignal;
  }): Promise<OutputBatch>;
  /** Releases the feed (an unacked batch is handed over again next time). */
  close(): Promise<void>;
}

/** Where an output stands, for `outputs list`, metrics and /readyz. */
export interface OutputPosition {
  name: string;
  /** Backend-specific position, printable (files: segment and offset; NATS: stream sequence). */
  position: string;
  /** Id of the last record acknowledged (null before the first). */
  lastId: string | null;
  /** Records stored after the position (an estimate where the backend must count). */
  lagRecords: number;
  /** Age in seconds of the oldest record not yet acknowledged (0 when none). */
  lagSeconds: number;
  /** Records retention removed before this output passed them: counted and reported, never silent (files: `maxLag`; NATS: the stream's limits). */
  skippedRecords?: number;
}

/** The durable positions of every output, configured or not (a removed output keeps its cursor). */
export interface OutputCursors {
  openFeed(options: OutputFeedOptions): Promise<OutputFeed>;
  list(): Promise<OutputPosition[]>;
  /** Moves an output's position back (or forward) to the first record received at or after `since` (epoch ms). */
  replay(name: string, since: number): Promise<void>;
  /** Deletes an output's position (`outputs forget`). Resolves false when it had none. */
  forget(name: string): Promise<boolean>;
}
