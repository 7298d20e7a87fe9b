// What each rule did lately, for `check` (a rule that blocked nothing for a week while records met its
// criteria): the newest matching record and the newest block, kept in memory as records are counted and
// written to the decisions store at once the first time (and at a rule's first match and first block), then
// at most once a minute per rule.
import type { DecisionChange, RuleEntry } from '../store/decisions.js';

/** A rule's history is written at most this often. */
const WRITE_EVERY_MS = 60_000;
/**
 * How much earlier than this collector's reload another's entry of a rule the reload added may start and still
 * be the rule's own: a cluster's collectors are reloaded seconds apart, and their clocks may differ.
 */
const RELOAD_SKEW_MS = 60_000;

export class RuleHistory {
  /** Per rule (by its index): the newest matching record and the newest block's record, in ms. */
  private readonly matched: number[];
  private readonly blocked: number[];
  /** When this engine last wrote each rule's entry. */
  private readonly writtenAt: number[];

  /**
   * Per rule: null, or for a rule new to this engine (added by a reload) when its history starts, the reload:
   * a stored entry older than that (by more than RELOAD_SKEW_MS) is an earlier rule's of the same name, not its
   * own. Set at the reload, not at the first write: on NATS a collector that does not run the engine writes
   * nothing until it takes the engine over, perhaps days later, and must then keep what the one before it
   * wrote of the rule since the reload.
   */
  private readonly startedAt: (number | null)[];

  constructor(
    private readonly names: readonly string[],
    added: ReadonlySet<string> = new Set(),
    reloadedAt = Number.NEGATIVE_INFINITY,
  ) {
    this.matched = names.map(() => Number.NEGATIVE_INFINITY);
    this.blocked = names.map(() => Number.NEGATIVE_INFINITY);
    this.writtenAt = names.map(() => Number.NEGATIVE_INFINITY);
    this.startedAt = names.map((name) => (added.has(name) ? reloadedAt - RELOAD_SKEW_MS : null));
  }

  /** A record (received at `at`) met the criteria of rule `index`. */
  match(index: number, at: number): void {
    if (at > (this.matched[index] as number)) this.matched[index] = at;
  }

  /** Rule `name` made or extended a block from a record received at `at`. */
  block(name: string, at: number): void {
    const index = this.names.indexOf(name);
    if (index !== -1 && at > (this.blocked[index] as number)) this.blocked[index] = at;
  }

  /** The entries to write now: those that changed, at once the first time, then at most once a minute. */
  due(stored: ReadonlyMap<string, RuleEntry>, now: number): DecisionChange[] {
    const out: DecisionChange[] = [];
    this.names.forEach((rule, i) => {
      const started = this.startedAt[i] as number | null;
      const found = stored.get(rule);
      const old = found && started !== null && Date.parse(found.since) < started ? undefined : found;
      const entry: RuleEntry = {
        rule,
        since: old?.since ?? new Date(now).toISOString(),
        lastMatch: newer(old?.lastMatch ?? null, this.matched[i] as number),
        lastBlock: newer(old?.lastBlock ?? null, this.blocked[i] as number),
      };
      if (old && old.lastMatch === entry.lastMatch && old.lastBlock === entry.lastBlock) return;
      // A rule's first match and first block are written at once; later ones once a minute.
      const first =
        !old ||
        (old.lastMatch === null) !== (entry.lastMatch === null) ||
        (old.lastBlock === null) !== (entry.lastBlock === null);
      if (!first && now - (this.writtenAt[i] as number) < WRITE_EVERY_MS) return;
      out.push({ kind: 'rule', key: rule, value: entry });
    });
    return out;
  }

  /** The entries `due` gave were stored at `now`. */
  written(changes: readonly DecisionChange[], now: number): void {
    for (const change of changes) {
      const index = this.names.indexOf(change.key);
      if (change.kind === 'rule' && index !== -1) this.writtenAt[index] = now;
    }
  }
}

function newer(stored: string | null, ms: number): string | null {
  if (ms === Number.NEGATIVE_INFINITY) return stored;
  if (stored !== null && Date.parse(stored) >= ms) return stored;
  return new Date(ms).toISOString();
}
