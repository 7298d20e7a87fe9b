// The decisions engine (DESIGN 15): reads the record log from its durable cursor as an output does, counts the
// records about each address unit per rule, and writes a block when a rule's thresholds are met; the cursor
// moves only once the block is durable (a crash reads the batch again, never skips it).
import type { Logger } from 'pino';
import { type BlocklistConfig, parseBlockDuration } from '../config/blocklist-schema.js';
import type { StoredRecord } from '../records/stored-record.js';
import {
  type Block,
  blocksInForce,
  DECISIONS_CURSOR,
  type DecisionChange,
  type DecisionsState,
  emptyDecisions,
  type OffenceEntry,
} from '../store/decisions.js';
import {
  canonicalIpv4,
  dstIpOf,
  dstIpv4Of,
  receivedAtMsOf,
  srcIpOf,
  srcIpv4Of,
  threatOf,
} from '../store/output-line.js';
import type { OutputFeed, OutputLine, Store } from '../store/store.js';
import { isoText } from '../store/stored-time.js';
import { AddressTracker, type UnitKey } from './address-tracker.js';
import { allowedBy } from './allowed.js';
import { formatNetwork, isPrivate, type Network, parseNetwork, unitOf, wordAt } from './networks.js';
import { RuleHistory } from './rule-history.js';
import { type CompiledRule, compileRules, type RuleInput } from './rules.js';

/** What the engine reads of a record: its time (epoch ms), what the rules test, and its addresses when asked. */
interface Seen extends RuleInput {
  at: number;
  /** The record's id: read again, a record counts once (address-tracker.ts). */
  id: string;
  source(): string;
  destination(): string;
  /** Whether the address is a canonical dotted IPv4 one, its bytes then written to `into` (no text made). */
  sourceIpv4(into: Uint8Array): boolean;
  destinationIpv4(into: Uint8Array): boolean;
}

/** A record read whole (the scan at start) as the engine reads it. */
function seenOf(record: StoredRecord): Seen {
  return {
    at: Date.parse(record.received_at),
    id: record.id,
    criticality: record.criticality,
    sensor: record.sensor,
    endpoint: record.endpoint,
    source: () => record.src_ip,
    destination: () => record.dst_ip,
    sourceIpv4: (into) => canonicalIpv4(record.src_ip, into),
    destinationIpv4: (into) => canonicalIpv4(record.dst_ip, into),
    threat: () => record.threat,
  };
}

/**
 * The lines of a batch as the engine reads them: one object, pointed at each line in turn (a batch's records
 * are looked at one after the other, and nothing keeps the object), its addresses and threat read off the line
 * only when a rule asks for them.
 */
class LineSeen implements Seen {
  line: OutputLine | null = null;
  at = 0;
  id = '';
  criticality = 0;
  sensor = '';
  endpoint: Seen['endpoint'] = 'firewall';

  point(line: OutputLine, at: number): this {
    const head = line.head;
    this.line = line;
    this.at = at;
    this.id = head.id;
    this.criticality = head.criticality;
    this.sensor = head.sensor;
    this.endpoint = head.endpoint;
    return this;
  }

  source(): string {
    return srcIpOf(this.line as OutputLine);
  }

  destination(): string {
    return dstIpOf(this.line as OutputLine);
  }

  sourceIpv4(into: Uint8Array): boolean {
    return srcIpv4Of(this.line as OutputLine, into);
  }

  destinationIpv4(into: Uint8Array): boolean {
    return dstIpv4Of(this.line as OutputLine, into);
  }

  threat(): string {
    return threatOf(this.line as OutputLine);
  }
}

/**
 * Date.parse of a decision's time (a block's since and until, an offence's last, a removal's time), remembered
 * by its text: every record about a blocked address reads its block's and offence's times again (a flood about
 * one address reads the same few texts), and each parse took more than the rest of that record's decision.
 */
const PARSED_TIMES = new Map<string, number>();
const PARSED_TIMES_MAX = 4096;
function timeMs(text: string): number {
  let ms = PARSED_TIMES.get(text);
  if (ms === undefined) {
    if (PARSED_TIMES.size >= PARSED_TIMES_MAX) PARSED_TIMES.clear();
    ms = Date.parse(text);
    PARSED_TIMES.set(text, ms);
  }
  return ms;
}

const DAY_MS = 86_400_000;
/** A new block of an address blocked within this long lasts repeatFactor times longer per earlier block. */
const REPEAT_WINDOW_MS = 30 * DAY_MS;
/** How long the engine trusts its own writes over a watcher that has not delivered them yet. */
const OWN_WRITES_MS = 10_000;
const CLEANUP_INTERVAL_MS = 60_000;
/** The longest step by which an active block is extended: it may end up to this much early. */
const EXTEND_STEP_MS = 60_000;
/** How often, at most, the engine says that blocklist.maxBlocks kept addresses from being blocked. */
const FULL_LOG_MS = 60_000;
/** Offences (an address's blocks of the last 30 days) kept at most, per blocklist.maxBlocks: the oldest go first. */
const OFFENCES_PER_BLOCK = 2;
/**
 * Offences one clean-up removes for that bound beyond those made since the last (one write, a NATS delete each:
 * a reload that lowers the bound removes the rest over the next minutes).
 */
const OFFENCES_TRIMMED_AT_ONCE = 10_000;
/** The sensors a block names at most: those whose records made it, then those that extended it. */
const MAX_BLOCK_SENSORS = 32;

/** New blocks logged one line each per batch; the rest in one line. */
const BLOCK_LINES_PER_BATCH = 10;
/** The most records and line bytes the engine takes from its feed at once. */
const BATCH_RECORDS = 10_000;
const BATCH_BYTES = 8_388_608;
/**
 * How long a batch fills once its first record is read: each batch costs a cursor write (files: written and
 * fsynced) and a decisions write, so at a steady trickle batches of a quarter second cost the process 1.12x the
 * CPU per ingested record of a collector without rules, where 20 ms cost 1.47x (alternated, load 8). A block is
 * that much later: well within the second a block has to reach the feeds.
 */
const BATCH_WAIT_MS = 250;
/** How often a leased engine renews its lease (and a waiting one tries to take it). */
const LEASE_RENEW_MS = 3000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export interface EngineDeps {
  store: Pick<Store, 'outputs' | 'decisions' | 'reader'>;
  /** The engine's cursor in Store.outputs (default DECISIONS_CURSOR). */
  cursor?: string;
  /** NATS: the engine runs only while this collector holds the cluster's lease (box-engine.ts). */
  lease?: { holder: string; ttlMs: number };
  blocklist: BlocklistConfig;
  logger: Logger;
  now?: () => number;
  /** Called after each write of decisions (its new blocks counted): the engine's thread sends its counts then. */
  onWrite?: () => void;
  /** How often ended blocks, expired allow entries and old offences are removed (ms; default a minute). */
  cleanUpIntervalMs?: number;
}

export interface RunningEngine {
  /**
   * A reload's blocklist: counting starts again when it changes what is counted (the rules, the units' prefixes),
   * else the counts are kept (allow entries, maxBlocks, durations changed).
   */
  configure(blocklist: BlocklistConfig): void;
  /** Counters for metrics and logs. */
  counts(): EngineCounts;
  stop(): Promise<void>;
}

/**
 * An address as the engine keys it. `key` names its unit in the tracker: its number for an IPv4 address whose
 * unit is its /32 (most records: no unit text made per record, no string hashed), else the unit
 * (`2001:db8::/64`).
 */
interface Target {
  key: UnitKey;
  private: boolean;
}

/** The IPv4 key unitOfKey named last, and its unit (records about one address come in runs). */
let namedKey = -1;
let namedUnit = '';

/** A tracker key's unit as the decisions name it. */
function unitOfKey(key: UnitKey): string {
  if (typeof key === 'string') return key;
  if (key !== namedKey) {
    namedKey = key;
    namedUnit = `${key >>> 24}.${(key >>> 16) & 0xff}.${(key >>> 8) & 0xff}.${key & 0xff}/32`;
  }
  return namedUnit;
}

/** A unit's key in the tracker (unitOfKey's inverse). */
function keyOfUnit(unit: string): UnitKey {
  const bytes = new Uint8Array(4);
  return unit.endsWith('/32') && canonicalIpv4(unit.slice(0, -3), bytes) ? wordAt(bytes) : unit;
}

/** Where targetOfSeen reads a canonical IPv4 address (its answer keeps no bytes). */
const SCRATCH_IPV4: Network = { family: 4, prefix: 32, bytes: new Uint8Array(4) };

export interface EngineCounts {
  /** Address units the engine keeps counts for, and those dropped at blocklist.maxTracked. */
  tracked: number;
  dropped: number;
  /** New blocks made, by rule (extensions not counted). */
  blocksMade: Record<string, number>;
  /** Records about an address never blocked by default (private ranges and the like), left alone: one per rule matched. */
  skippedPrivate: number;
  /** Records that met a rule's thresholds about an address an allow entry covers: one per rule met. */
  skippedAllowed: number;
  /** Records that met a rule's thresholds about an address not blocked because blocklist.maxBlocks were held. */
  skippedFull: number;
  /** Blocks in force now (any rule or manual). */
  active: number;
}

export function startDecisionEngine(deps: EngineDeps): RunningEngine {
  const now = deps.now ?? Date.now;
  const cleanUpEvery = deps.cleanUpIntervalMs ?? CLEANUP_INTERVAL_MS;
  const logger = deps.logger.child({ part: 'decisions' });
  let config = deps.blocklist;
  let rules = compileRules(config);
  let maxDurationMs = parseBlockDuration(config.maxDuration) as number;
  let tracker = new AddressTracker(config.maxTracked);
  /** Units dropped at the bound by trackers made before this one (the metric is a counter). */
  let droppedBefore = 0;
  /** Counting starts again from nothing: what the old tracker counted is forgotten, its drops kept. */
  function freshTracker(): void {
    droppedBefore += tracker.dropped;
    tracker = new AddressTracker(config.maxTracked);
  }
  let history = new RuleHistory(rules.map((r) => r.name));
  /** Whether the watcher has delivered the stored decisions (a rule's history is written on top of them). */
  let loaded = false;
  let state: DecisionsState = emptyDecisions();
  /** Entries this engine wrote, by `kind key`, until the watcher has them (or OWN_WRITES_MS passed). */
  const own = new Map<string, { change: DecisionChange; at: number }>();
  const blocksMade: Record<string, number> = {};
  let skippedPrivate = 0;
  let skippedAllowed = 0;
  let skippedFull = 0;
  /** Of skippedFull, those not logged yet, when the last line said so, and the line waiting for its minute. */
  let fullUnlogged = 0;
  let fullLoggedAt = Number.NEGATIVE_INFINITY;
  let fullTimer: NodeJS.Timeout | undefined;
  /**
   * New blocks (of an address with no block in force) decided and not yet in force in the delivered state: the
   * batch's, and written ones the watcher has not shown yet (NATS). With the blocks in force delivered, what
   * blocklist.maxBlocks is held against. By address: the block, and the batch (its changes) that decided it.
   */
  const growing = new Map<string, { since: number; until: number; batch: Map<string, DecisionChange> }>();
  /** New blocks made since the last clean-up: the offences it must be able to trim. */
  let madeSinceCleanUp = 0;
  let stopped = false;
  const abort = new AbortController();
  /** Whether this engine holds the cluster's lease (always, without one). */
  let leading = false;

  /** The removals (`cleared`) last delivered: the store may hand over the same state object, changed. */
  let clearedSeen = new Map<string, string>();
  const inForce = activeBlocks(now);
  /** The stored decisions, as the watcher delivers them (or as rebuild() reads them). */
  function delivered(next: DecisionsState): void {
    const removed: string[] = [];
    const cleared = new Map<string, string>();
    for (const [unit, c] of next.cleared) {
      cleared.set(unit, c.at);
      if (clearedSeen.get(unit) !== c.at) removed.push(unit);
    }
    clearedSeen = cleared;
    state = next;
    loaded = true;
    inForce.delivered(next);
    settleGrowing(next);
    // The watcher has delivered these writes: from now on the store says what they are (a `block remove`
    // after them must not be hidden by them).
    for (const [key, mine] of own) if (holds(mine.change)) own.delete(key);
    if (removed.length > 0) void recheck(removed);
  }
  const watch = deps.store.decisions.watch(delivered, (error) =>
    logger.warn({ err: error.message }, 'cannot read the decisions; keeping the last ones'),
  );

  /** Whether the state delivered holds `change` (the very value, as the files backend keeps its writer's). */
  function holds(change: DecisionChange): boolean {
    const map = change.kind === 'block' ? state.blocks : state.offences;
    const seen = map.get(change.key) ?? null;
    return seen === change.value || JSON.stringify(seen) === JSON.stringify(change.value);
  }

  function current<K extends 'block' | 'offence'>(kind: K, key: string) {
    const mine = own.size > 0 ? own.get(`${kind} ${key}`) : undefined;
    if (mine && now() - mine.at < OWN_WRITES_MS)
      return mine.change.value as K extends 'block' ? Block | null : OffenceEntry | null;
    const map = kind === 'block' ? state.blocks : state.offences;
    return (map.get(key) ?? null) as K extends 'block' ? Block | null : OffenceEntry | null;
  }

  /** The changes one record makes (none, or a block made or extended, with its offence). */
  function observe(record: Seen, changes: Map<string, DecisionChange>): void {
    const at = record.at;
    if (Number.isNaN(at)) return;
    // Each address of the record is looked at once, whatever the number of rules.
    let source: Target | null | undefined;
    let destination: Target | null | undefined;
    const anyCleared = state.cleared.size > 0;
    for (let index = 0; index < rules.length; index++) {
      const rule = rules[index] as CompiledRule;
      if (!rule.matches(record)) continue;
      history.match(index, at);
      let target: Target | null;
      if (rule.address === 'source') {
        source ??= targetOfSeen(record, true);
        target = source;
      } else {
        destination ??= targetOfSeen(record, false);
        target = destination;
      }
      if (target === null) continue;
      if (target.private) {
        skippedPrivate++;
        continue;
      }
      const cleared = anyCleared ? state.cleared.get(unitOfKey(target.key)) : undefined;
      const notBefore = cleared ? timeMs(cleared.at) : Number.NEGATIVE_INFINITY;
      if (at <= notBefore) continue;
      let met = tracker.observe(target.key, index, rule, record, notBefore);
      if (met === null) continue;
      const unit = unitOfKey(target.key);
      if (
        (config.allow.length > 0 || state.allow.size > 0) &&
        allowedBy(parseNetwork(unit) as Network, config.allow, state.allow, now()) !== null
      ) {
        skippedAllowed++;
        continue;
      }
      const held = current('block', unit);
      if (held !== null && held.rule === 'manual') {
        // A block by hand: nothing is made while it is in force (decide), and once it has ended only the
        // records received after its end count, as the removal the clean-up makes of its end will say.
        const end = timeMs(held.until);
        if (end > now() || at <= end) continue;
        met = tracker.evaluate(target.key, index, rule, end)?.met ?? null;
        if (met === null) continue;
      }
      decide(unit, rule, at, met, changes);
    }
  }

  /**
   * A record's source or destination as the engine keys it. Most records carry a canonical dotted IPv4 address:
   * its /32 unit's key is its number, read off the line's bytes in one pass (no text made).
   */
  function targetOfSeen(record: Seen, source: boolean): Target | null {
    const bytes = SCRATCH_IPV4.bytes;
    if (config.ipv4Prefix === 32 && (source ? record.sourceIpv4(bytes) : record.destinationIpv4(bytes)))
      return { key: wordAt(bytes), private: !config.blockPrivate && isPrivate(SCRATCH_IPV4) };
    return targetOf(source ? record.source() : record.destination());
  }

  /** An address as the engine keys it: its unit's key, and whether it is never blocked by default. */
  function targetOf(address: string): Target | null {
    const network = unitOf(address, config.ipv4Prefix, config.ipv6Prefix);
    if (network === null) return null;
    return {
      key: network.family === 4 && network.prefix === 32 ? wordAt(network.bytes) : formatNetwork(network),
      private: !config.blockPrivate && isPrivate(network),
    };
  }

  function decide(
    unit: string,
    rule: CompiledRule,
    at: number,
    met: { records: number; sensors: string[]; criticality: number },
    changes: Map<string, DecisionChange>,
  ): void {
    const pending = changes.get(`block ${unit}`);
    const existing = (pending?.value as Block | null | undefined) ?? current('block', unit);
    const existingUntil = existing === null ? 0 : timeMs(existing.until);
    const active = existing !== null && existingUntil > now();
    if (active && existing.rule === 'manual') return;
    const maxMs = maxDurationMs;
    let durationMs = rule.durationMs;
    let offence: OffenceEntry | null = null;
    if (!active && !growing.has(unit) && full()) {
      // Full: no new address is blocked until blocks end (each held one is extended as before). A flood of
      // records from ever new sources (spoofed, or a sensor's mistake) would otherwise grow the blocks, their
      // offences and every feed without bound, in every process that holds the decisions.
      skippedFull++;
      fullUnlogged++;
      return;
    }
    let since: string | null = null;
    if (!active) {
      // A record received while a block by hand was in force made nothing then, nor does it when read again.
      if (existing !== null && existing.rule === 'manual' && at < existingUntil) return;
      const before =
        (changes.get(`offence ${unit}`)?.value as OffenceEntry | null | undefined) ??
        current('offence', unit);
      // When the address's last block ended: its entry says until the clean-up removes it, its offence after.
      const lastUntil =
        existing !== null
          ? existingUntil
          : before?.until !== undefined
            ? timeMs(before.until)
            : Number.NEGATIVE_INFINITY;
      if (before !== null && at < lastUntil) {
        // Received while that block was in force, read again (a restart, or a collector taking the engine over,
        // reads the rules' windows again) or read late: it extended that block then, at that block's multiple,
        // and is no new offence. Its end is then mostly past (nothing to do, below); a record read so late that
        // it is not goes on with that block, as its first reading would have.
        durationMs = Math.min(maxMs, rule.durationMs * config.repeatFactor ** Math.max(0, before.blocks - 1));
        since = existing?.since ?? before.last;
      } else {
        const repeats = before && at - timeMs(before.last) < REPEAT_WINDOW_MS ? before.blocks : 0;
        durationMs = Math.min(maxMs, rule.durationMs * config.repeatFactor ** repeats);
        since = isoText(at);
        offence = { address: unit, blocks: repeats + 1, last: since };
      }
    } else {
      // An active block keeps the multiple it was made with (its offence counts the blocks so far).
      let made =
        (changes.get(`offence ${unit}`)?.value as OffenceEntry | null | undefined) ??
        current('offence', unit);
      const since = timeMs(existing.since);
      if (made === null || timeMs(made.last) < since) {
        // The block's own offence is missing: a batch cut after its block was stored and before its offence
        // (NATS writes blocks first). Counted now, from the block before it, as the block was made; and
        // reported now, since the cut write failed before it could be (reportBlocks).
        const repeats = made && since - timeMs(made.last) < REPEAT_WINDOW_MS ? made.blocks : 0;
        made = { address: unit, blocks: repeats + 1, last: existing.since };
        changes.set(`offence ${unit}`, { kind: 'offence', key: unit, value: made });
        repaired.set(unit, existing);
      }
      durationMs = Math.min(maxMs, rule.durationMs * config.repeatFactor ** Math.max(0, made.blocks - 1));
    }
    const until = Math.max(at + durationMs, active ? existingUntil : 0);
    // Records read again long after (a replay, a late start) make no block that would already be over.
    if (until <= now()) return;
    // An active block keeps the sensors it names and adds the new ones. It is written again only when it moves
    // on by a step (a hundredth of its duration, at most a minute) or a new sensor reports it: a flood of
    // records about one address, from any number of sensors, writes it about once a minute. Checked before the
    // block is built: in such a flood nearly every record ends here.
    const sensors = active ? withSensors(existing.sensors, met.sensors) : met.sensors;
    const step = Math.min(EXTEND_STEP_MS, durationMs / 100);
    if (active && until - existingUntil < step && sensors === existing.sensors) return;
    // An active block keeps the rule and reason that set its end, unless this rule makes it end later.
    const later = !active || at + durationMs > existingUntil;
    const block: Block = {
      address: unit,
      rule: later ? rule.name : existing.rule,
      reason: later ? rule.reason : existing.reason,
      since: active ? existing.since : (since ?? isoText(at)),
      until: isoText(until),
      criticality: Math.max(met.criticality, active ? existing.criticality : 0),
      records: active ? Math.max(met.records, existing.records) : met.records,
      sensors,
      who: null,
    };
    // An extension is written only over the block it extends, as the store held it when this engine saw it (the
    // batch's first change of it says so): a `block remove` or `block add` that landed meanwhile, not shown to the
    // engine yet, stays (store/decisions.ts, ifStill).
    const ifStill = active ? (pending ? (pending.ifStill as Block | null | undefined) : existing) : undefined;
    changes.set(
      `block ${unit}`,
      ifStill === undefined
        ? { kind: 'block', key: unit, value: block }
        : { kind: 'block', key: unit, value: block, ifStill },
    );
    if (!active) growing.set(unit, { since: timeMs(block.since), until, batch: changes });
    else {
      // Extended before the decisions delivered show it (NATS): counted until its new end.
      const counted = growing.get(unit);
      if (counted !== undefined) counted.until = until;
    }
    history.block(rule.name, at);
    if (offence) {
      // A new block: logged and counted once it is stored (reportBlocks).
      changes.set(`offence ${unit}`, { kind: 'offence', key: unit, value: offence });
    }
  }

  /**
   * Blocks removed by hand: records about them received since the removal, counted before the watcher showed
   * it, make the block again now (older ones no longer count: the tracker measures after the removal).
   */
  async function recheck(units: string[]): Promise<void> {
    const changes = new Map<string, DecisionChange>();
    for (const unit of units) {
      own.delete(`block ${unit}`);
      const cleared = state.cleared.get(unit);
      const network = parseNetwork(unit);
      if (!cleared || network === null) continue;
      if (allowedBy(network, config.allow, state.allow, now()) !== null) continue;
      rules.forEach((rule, index) => {
        const found = tracker.evaluate(keyOfUnit(unit), index, rule, Date.parse(cleared.at));
        if (found) decide(unit, rule, found.at, found.met, changes);
      });
    }
    try {
      await write(changes);
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'cannot write the decisions');
    }
  }

  /** Units whose offence decide() wrote again for a block stored by a cut write, and that block: cleared by each write. */
  const repaired = new Map<string, Block>();

  /**
   * New blocks of writes that failed (some of their puts may have landed): the batch is decided again, and a
   * block that was stored is then no longer new; it is reported after the next write that succeeds.
   */
  const unreported = new Map<string, Block>();

  async function write(changes: Map<string, DecisionChange>): Promise<void> {
    try {
      // Written: counted here until the decisions delivered have them in force (delivered(): at once on files).
      await writeChanges(changes);
    } catch (error) {
      for (const [unit, block] of newBlocks(changes)) unreported.set(unit, block);
      // This batch's new blocks are decided again with it, and held against the bound then.
      for (const [unit, g] of growing) if (g.batch === changes) growing.delete(unit);
      throw error;
    } finally {
      repaired.clear();
      reportFull();
    }
  }

  /**
   * Whether blocklist.maxBlocks blocks are in force, with the new ones decided and not yet delivered. Blocks that
   * ended and that the clean-up has not removed yet do not count: read only when the stored blocks reach the bound
   * (the count of those in force walks them all, once per delivery of the decisions or end of a block).
   */
  function full(): boolean {
    const max = config.maxBlocks;
    return state.blocks.size + growing.size >= max && inForce.count() + growing.size >= max;
  }

  /**
   * Drops from `growing` the blocks the decisions just delivered have in force (the count of blocks in force,
   * made again after each delivery, has them now), those that ended (they count nowhere), and those a `block
   * remove` cleared after they were made. Only here: the NATS backend changes the state object in place before
   * it delivers it, so settling against the live state would drop blocks the count has not seen yet.
   */
  function settleGrowing(shown: DecisionsState): void {
    if (growing.size === 0) return;
    const at = now();
    for (const [unit, pending] of growing) {
      const stored = shown.blocks.get(unit);
      const cleared = shown.cleared.get(unit);
      if (
        (stored !== undefined && timeMs(stored.until) > at && timeMs(stored.since) >= pending.since) ||
        pending.until <= at ||
        (cleared !== undefined && timeMs(cleared.at) >= pending.since)
      )
        growing.delete(unit);
    }
  }

  /**
   * Says, at most once a minute, how many records met a rule and made no block because the blocks are full (one
   * per rule met: a flood about one address counts each of its records); refusals within the minute after a
   * line are said when it is up.
   */
  function reportFull(): void {
    const at = now();
    if (fullUnlogged === 0 || fullTimer !== undefined || stopped) return;
    if (at - fullLoggedAt < FULL_LOG_MS) {
      fullTimer = setTimeout(
        () => {
          fullTimer = undefined;
          reportFull();
        },
        fullLoggedAt + FULL_LOG_MS - at,
      );
      fullTimer.unref();
      return;
    }
    logger.warn(
      { refused: fullUnlogged, blocks: inForce.count() + growing.size, maxBlocks: config.maxBlocks },
      'blocklist.maxBlocks reached: records that met a rule made no block (their addresses are blocked once blocks end)',
    );
    fullUnlogged = 0;
    fullLoggedAt = at;
  }

  /** A write's new blocks (with their offence), and blocks whose missing offence it repairs, by unit. */
  function newBlocks(changes: Map<string, DecisionChange>): Map<string, Block> {
    const blocks = new Map<string, Block>();
    for (const change of changes.values()) {
      if (change.kind !== 'offence') continue;
      const block =
        (changes.get(`block ${change.key}`)?.value as Block | null | undefined) ?? repaired.get(change.key);
      if (block) blocks.set(change.key, block);
    }
    return blocks;
  }

  async function writeChanges(changes: Map<string, DecisionChange>): Promise<void> {
    const rulesDue = loaded ? history.due(state.rules, now()) : [];
    if (changes.size === 0 && rulesDue.length === 0) return;
    const list = [...changes.values(), ...rulesDue];
    // An extension of a block the store no longer held (its ifStill) was not written: not this engine's to show.
    const skipped = new Set(await deps.store.decisions.apply(list));
    const at = now();
    history.written(rulesDue, at);
    // A store whose watchers' state already holds the write (files) needs no bookkeeping of it.
    for (const [key, change] of changes) {
      if (skipped.has(change)) continue;
      const map = change.kind === 'block' ? state.blocks : state.offences;
      if ((map.get(change.key) ?? null) !== change.value) own.set(key, { change, at });
    }
    for (const [key, mine] of own) if (at - mine.at >= OWN_WRITES_MS) own.delete(key);
    reportBlocks(changes);
    deps.onWrite?.();
  }

  /**
   * The new blocks of a write, once stored: a batch whose write failed is decided again and reported then (a
   * block it did store, through the offence repaired for it), so a block is logged and counted once. One line each up to a few, then one line for the rest (an attack makes
   * thousands at once).
   */
  function reportBlocks(changes: Map<string, DecisionChange>): void {
    let lines = 0;
    const more: Record<string, number> = {};
    const made = newBlocks(changes);
    // A cut write's blocks that were stored (the same block, by its start) and so are not new to this one.
    for (const [unit, block] of unreported) {
      if (!made.has(unit) && current('block', unit)?.since === block.since) made.set(unit, block);
    }
    unreported.clear();
    for (const block of made.values()) {
      blocksMade[block.rule] = (blocksMade[block.rule] ?? 0) + 1;
      madeSinceCleanUp++;
      if (lines++ < BLOCK_LINES_PER_BATCH) {
        logger.info(
          {
            address: block.address,
            rule: block.rule,
            until: block.until,
            records: block.records,
            sensors: block.sensors.length,
          },
          'address blocked',
        );
      } else more[block.rule] = (more[block.rule] ?? 0) + 1;
    }
    const left = Object.values(more).reduce((a, b) => a + b, 0);
    if (left > 0) logger.info({ blocks: left, byRule: more }, 'more addresses blocked');
  }

  /** Expired blocks, old offences and old removals leave the store (the feeds leave expired blocks out anyway). */
  async function cleanUp(): Promise<void> {
    const at = now();
    const changes: DecisionChange[] = [];
    // What this engine wrote and the decisions delivered may not show yet (NATS): their older values (an ended
    // block of an address blocked again, its old offence) are not what the store holds now.
    const mine = (kind: 'block' | 'offence', key: string) => own.has(`${kind} ${key}`) || growing.has(key);
    // What an ended block leaves behind, written before the block goes (a write of its own: NATS stores a
    // batch's blocks before its offences, and one cut between them would lose this for good). Records received
    // before the end, read again after a restart or by a collector taking over, then make nothing (decide).
    const ends: DecisionChange[] = [];
    for (const [key, block] of state.blocks) {
      if (Date.parse(block.until) > at || mine('block', key)) continue;
      if (block.rule === 'manual') {
        // A block by hand: records received while it was in force made nothing, and count for nothing after
        // it, as after a `block remove` at its end.
        const cleared = state.cleared.get(key);
        if (cleared === undefined || Date.parse(cleared.at) < Date.parse(block.until)) {
          // Marked as an end, unless it replaces a `block remove`'s mark: `store migrate` must still carry
          // that removal (as made at this later time).
          const ended = cleared === undefined || cleared.ended === true;
          // Only over the mark it saw (or none): a `block remove` written meanwhile keeps its own.
          ends.push({
            kind: 'cleared',
            key,
            value: { address: key, at: block.until, ...(ended ? { ended: true as const } : {}) },
            ifStill: cleared ?? null,
          });
          // Not a removal to look at again (recheck): the records received since its end were decided as
          // they came.
          clearedSeen.set(key, block.until);
        }
      } else {
        // A rule's block: its end stays in its offence.
        const offence = state.offences.get(key);
        if (
          offence !== undefined &&
          offence.until !== block.until &&
          !mine('offence', key) &&
          at - Date.parse(offence.last) <= REPEAT_WINDOW_MS
        )
          ends.push({ kind: 'offence', key, value: { ...offence, until: block.until }, ifStill: offence });
      }
      // Removed only while the store still holds this ended block: a `block add` of the network written
      // meanwhile, that the decisions have not shown yet, stays (store/decisions.ts, ifStill).
      changes.push({ kind: 'block', key, value: null, ifStill: block });
    }
    if (ends.length > 0) {
      // An end the store skipped (it holds a mark or an offence this engine was not shown: a `block remove`, a
      // collector that took over, a view behind) keeps its block: removed without its end, the records that made
      // it could make it again. A later clean-up decides it again from a newer view.
      const unwritten = new Set((await deps.store.decisions.apply(ends)).map((change) => change.key));
      // A block written meanwhile (a `block add` of an address whose block had ended, a recheck) is not the
      // ended one found above: only blocks as they were then, and still ended, go (and each only while the store
      // holds it still: a write the watcher has not shown yet stays).
      const ended = changes.filter((change) => {
        const block = state.blocks.get(change.key);
        return (
          block !== undefined &&
          Date.parse(block.until) <= at &&
          !mine('block', change.key) &&
          !unwritten.has(change.key)
        );
      });
      changes.length = 0;
      changes.push(...ended);
    }
    for (const [key, offence] of state.offences) {
      // A block in force keeps its offence, however long ago it was made (extended for over 30 days): without
      // it, its next extension would be taken for a block whose offence a cut write lost, and made again.
      const block = state.blocks.get(key);
      if ((block && Date.parse(block.until) > at) || mine('offence', key)) continue;
      if (at - Date.parse(offence.last) > REPEAT_WINDOW_MS)
        changes.push({ kind: 'offence', key, value: null });
    }
    // At least as many as blocks were made since the last clean-up (each added one), so a table that turns over
    // fast stays within the bound; beyond that, 10,000 at a time (a reload that lowered it).
    changes.push(
      ...offencesOverBound(
        state,
        at,
        config.maxBlocks * OFFENCES_PER_BLOCK,
        OFFENCES_TRIMMED_AT_ONCE + madeSinceCleanUp,
        (key) => mine('offence', key),
      ),
    );
    madeSinceCleanUp = 0;
    // An old mark goes, unless this clean-up has just written its block's end over it (the view still shows the
    // old one), and only as seen.
    const marked = new Set(ends.filter((end) => end.kind === 'cleared').map((end) => end.key));
    for (const [key, cleared] of state.cleared)
      if (at - Date.parse(cleared.at) > REPEAT_WINDOW_MS && !marked.has(key))
        changes.push({ kind: 'cleared', key, value: null, ifStill: cleared });
    // The history of a rule no longer configured: one added again later under its name starts afresh.
    for (const key of state.rules.keys())
      if (!rules.some((r) => r.name === key)) changes.push({ kind: 'rule', key, value: null });
    for (const [key, entry] of state.allow)
      if (entry.until !== null && Date.parse(entry.until) <= at)
        changes.push({ kind: 'allow', key, value: null, ifStill: entry });
    if (changes.length > 0) await deps.store.decisions.apply(changes);
  }

  /**
   * The counts of the longest window, from the records stored in it (a restart forgets them otherwise), with
   * the decisions they make (the same ones: made from the records' own times). The cursor then hands over the
   * records after its position, some of them read here too: those count once (the tracker knows them by id).
   * None is skipped by its id: ids are not in the order records are stored (workers, a NATS cluster's clocks,
   * syslog retries), so one stored after this read with an older id than its newest would never count.
   */
  async function rebuild(): Promise<void> {
    const longest = Math.max(0, ...rules.map((r) => r.withinMs));
    const since = now() - longest;
    // Counted from the records read below only: a tracker kept from before (this collector's lease lost and
    // taken again, NATS) already holds records of this window.
    freshTracker();
    if (rules.length === 0) return;
    // The decisions as stored now, not as the watcher last delivered them: a collector taking over from another
    // (NATS), or starting, may not have been shown the blocks made from the records read again below yet, and
    // would make them a second time (logged and counted twice, and a repeat offender's block at its first length).
    delivered(await deps.store.decisions.read());
    const changes = new Map<string, DecisionChange>();
    let records = 0;
    await deps.store.reader.scan(
      since,
      (record) => {
        records++;
        observe(seenOf(record), changes);
      },
      abort.signal,
    );
    await write(changes);
    logger.info(
      { records, since: new Date(since).toISOString(), changes: changes.size },
      "the rules' windows read again from the stored records",
    );
  }

  async function run(): Promise<void> {
    let feed: OutputFeed | null = null;
    let lastCleanUp = now();
    /** Whether the rules' windows were read since the engine (re)started counting. */
    let scanned = false;
    let leader = deps.lease === undefined;
    leading = leader;
    let leaseAt = Number.NEGATIVE_INFINITY;
    while (!abort.signal.aborted) {
      try {
        if (rules.length === 0) {
          // No rule, nothing to decide: the record log is not read at all (ingest pays nothing for it).
          await feed?.close().catch(() => {});
          feed = null;
          scanned = false;
          await sleep(1000, abort.signal);
          continue;
        }
        if (deps.lease && now() - leaseAt >= LEASE_RENEW_MS) {
          leaseAt = now();
          const was = leader;
          leader = await deps.store.decisions.lease('engine', deps.lease.holder, deps.lease.ttlMs);
          leading = leader;
          if (leader !== was) {
            logger.info(
              { holder: deps.lease.holder },
              leader
                ? 'this collector runs the decisions engine now'
                : 'another collector runs the decisions engine',
            );
          }
          if (!leader) {
            // The leader's: this collector's view of the windows is rebuilt when it takes over.
            await feed?.close().catch(() => {});
            feed = null;
            scanned = false;
            await sleep(LEASE_RENEW_MS, abort.signal);
            continue;
          }
        }
        // Lines in the writer's form are checked whole off their bytes, not parsed (output-line.ts): the engine
        // reads their head and three fields (engineFieldsOf); any other line is parsed and shape-checked.
        feed ??= await deps.store.outputs.openFeed({
          name: deps.cursor ?? DECISIONS_CURSOR,
          startAt: 'now',
          check: 'head',
        });
        if (!scanned) {
          await rebuild();
          scanned = true;
        }
        // Each batch that makes blocks writes the decisions once (the files backend rewrites its whole document):
        // behind a backlog, larger batches write it less often; a batch of 10,000 is decided in about 0.1 s.
        // Back in time to renew the lease (NATS: a full renewal interval, so that a busy stream's batches, a
        // quarter second each, are never cut short: a pull cut in its middle has the rest delivered again later),
        // and on the files backend for the clean-up, even when no record comes: an idle collector's ended blocks
        // and allow entries go too (a files batch cut short is only a shorter one).
        const wakeMs = deps.lease
          ? LEASE_RENEW_MS
          : Math.max(BATCH_WAIT_MS, lastCleanUp + cleanUpEvery - now());
        const batch = await feed.next({
          maxRecords: BATCH_RECORDS,
          maxBytes: BATCH_BYTES,
          waitMs: BATCH_WAIT_MS,
          signal: AbortSignal.any([abort.signal, AbortSignal.timeout(wakeMs)]),
        });
        if (batch.records.length > 0) {
          const changes = new Map<string, DecisionChange>();
          const seen = new LineSeen();
          for (const line of rules.length > 0 ? batch.records : [])
            observe(seen.point(line, receivedAtMsOf(line)), changes);
          await write(changes);
          await batch.ack();
        }
        if (now() - lastCleanUp >= cleanUpEvery) {
          lastCleanUp = now();
          await cleanUp();
        }
      } catch (error) {
        if (abort.signal.aborted) break;
        // The batch is handed over again and decided again: its records, counted already, count once (the
        // tracker knows them by id).
        logger.error(
          { err: (error as Error).message },
          'the decisions engine failed; reading the batch again in 1 s',
        );
        await feed?.close().catch(() => {});
        feed = null;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    await feed?.close().catch(() => {});
  }
  const running = run();

  return {
    configure(next) {
      const recount = countedBy(config) !== countedBy(next);
      config = next;
      const before = new Set(rules.map((r) => r.name));
      rules = compileRules(next);
      maxDurationMs = parseBlockDuration(next.maxDuration) as number;
      // The tracker keeps each rule's windows by its place among the rules, per unit of the prefixes: kept when
      // those are the same (a bound lowered below the units it keeps starts it afresh as well).
      if (recount || !tracker.rebound(next.maxTracked)) freshTracker();
      // A rule added by this reload starts its history afresh (`check` waits 7 days before it warns about it),
      // though an earlier rule of its name left one in the store.
      history = new RuleHistory(
        rules.map((r) => r.name),
        new Set(rules.filter((r) => !before.has(r.name)).map((r) => r.name)),
        now(),
      );
    },
    counts: () => ({
      tracked: tracker.size,
      dropped: droppedBefore + tracker.dropped,
      blocksMade: { ...blocksMade },
      skippedPrivate,
      skippedAllowed,
      skippedFull,
      // Counted when read (every block looked at after each write): the engine's thread sends the rest only.
      get active() {
        return inForce.count();
      },
    }),
    async stop() {
      stopped = true;
      abort.abort();
      watch.stop();
      clearTimeout(fullTimer);
      await running;
      // A collector stopping hands the engine on at the next collector's renewal, not at the lease's end.
      if (deps.lease && leading)
        await deps.store.decisions.lease('engine', deps.lease.holder, 0).catch(() => {});
    },
  };
}

/** What the tracker's counts are made of: the rules, in order, and the units they count per. */
function countedBy(blocklist: BlocklistConfig): string {
  return JSON.stringify([blocklist.rules, blocklist.ipv4Prefix, blocklist.ipv6Prefix]);
}

/**
 * Blocks in force in the decisions last delivered: counted again after a delivery, or when the first of the
 * counted blocks ends (metrics ask often; store/decisions.ts blocksInForce).
 */
export function activeBlocks(now: () => number): { delivered(state: DecisionsState): void; count(): number } {
  let state: DecisionsState = emptyDecisions();
  let counted: { validUntil: number; active: number } | null = null;
  return {
    delivered(next) {
      state = next;
      counted = null;
    },
    count() {
      const at = now();
      if (counted === null || at >= counted.validUntil) {
        const { count, firstEnd } = blocksInForce(state.blocks.values(), at);
        counted = { validUntil: Math.min(at + CLEANUP_INTERVAL_MS, firstEnd), active: count };
      }
      return counted.active;
    },
  };
}

/**
 * The offences past `max` (those whose block is in force kept), the oldest first: a blocklist.maxBlocks table that
 * turns over (short blocks under a flood) would otherwise leave 30 days of offences behind it. Those over 30 days
 * old are left to the clean-up's own pass. Forgotten, an address's next block is a first one.
 */
function offencesOverBound(
  state: DecisionsState,
  at: number,
  max: number,
  most: number,
  keep: (key: string) => boolean,
): DecisionChange[] {
  if (state.offences.size <= max) return [];
  let leaving = 0;
  const old: { key: string; last: number }[] = [];
  for (const [key, offence] of state.offences) {
    const block = state.blocks.get(key);
    if ((block && Date.parse(block.until) > at) || keep(key)) continue;
    const last = Date.parse(offence.last);
    if (at - last > REPEAT_WINDOW_MS) leaving++;
    else old.push({ key, last });
  }
  const over = state.offences.size - leaving - max;
  if (over <= 0) return [];
  old.sort((a, b) => a.last - b.last);
  return old.slice(0, Math.min(over, most)).map(({ key }) => ({ kind: 'offence', key, value: null }));
}

/**
 * `named` with the sensors of `more` it lacks added, up to MAX_BLOCK_SENSORS: `named` itself when none is added
 * (a block names every sensor that made or extended it, and a flood from sensors it names writes nothing).
 */
function withSensors(named: string[], more: string[]): string[] {
  let out = named;
  for (const sensor of more) {
    if (out.length >= MAX_BLOCK_SENSORS) break;
    if (out.includes(sensor)) continue;
    if (out === named) out = [...named];
    out.push(sensor);
  }
  return out;
}
