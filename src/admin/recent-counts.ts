// Rolling counts for the dashboard: records by criticality over the last hour, 24 hours (exact, in 10-minute
// buckets) and 7 days (hourly buckets: the histograms), top threats, source addresses, source countries and source
// ASes over 24 hours (fixed-size top-K sketches per hour), so a summary never rescans the store and no input can make
// them grow past a fixed size.
import { isThreatRecord, type StoredRecord } from '../records/stored-record.js';
import { type SketchEntry, SpaceSaving } from './space-saving.js';

const MINUTE = 60_000;
const TEN_MINUTES = 10 * MINUTE;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
const HOUR_BUCKETS = 60;
const WEEK_BUCKETS = 168;
const DAY_BUCKETS = 144;
const TOP_HOURS = 25;
/** Names are counted by their first characters: a 4,096-character threat costs what a 200-character one does. */
export const MAX_NAME_CHARS = 200;
/** Distinct threats (and sources) an hour's sketch holds; past it the top lists are approximate. */
export const TOP_CAPACITY = 256;

interface HourTop {
  threats: SpaceSaving;
  sources: SpaceSaving;
  /** The enrichment's: `US`; and 15169 labelled `GOOGLE`, listed as `AS15169 GOOGLE` (as `threats stats --by
   * src_asn` names them). An AS is counted by its number: no name is made for each record. */
  countries: SpaceSaving;
  asns: SpaceSaving<number>;
}

const SKETCHES = ['threats', 'sources', 'countries', 'asns'] as const;

export interface TopEntry {
  name: string;
  count: number;
}

export interface RecentSummary {
  generatedAt: string;
  /** Index = criticality 0-4. */
  lastHour: number[];
  lastDay: number[];
  topThreats: TopEntry[];
  topSources: TopEntry[];
  /** Of the records whose source has a country (an AS), from the enrichment; others are not counted. */
  topCountries: TopEntry[];
  topAsns: TopEntry[];
  /** True when an hour had more distinct names than its sketch holds: top counts may be off (docs/operations.md). */
  topApproximate: boolean;
}

/** The histogram of a range: `buckets[i]` counts by criticality 0-4 from `from + i × bucketMs`, oldest first. */
export interface Histogram {
  range: HistogramRange;
  bucketMs: number;
  from: string;
  buckets: number[][];
}

export type HistogramRange = '24h' | '7d';

/**
 * The two histograms' buckets alone: 10-minute buckets of 24 hours and hourly ones of 7 days, by criticality.
 * Fixed size (at most twice the bars of each range), whatever is added: the dashboard keeps one for all records
 * (in RecentCounts) and one per filter in view (filtered-histograms.ts).
 */
export class HistogramCounts {
  /** 10-minute buckets (the 24 h bars, and the summary's last 24 hours). */
  readonly tens = new Map<number, number[]>();
  private readonly weekHours = new Map<number, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts a record received at `at` (ms) of criticality `c` (0-4); older than the week: not counted. */
  add(at: number, c: number): void {
    const now = this.now();
    if (!(at > now - WEEK - HOUR)) return;
    if (at > now - DAY - TEN_MINUTES)
      bump(
        bucketOf(this.tens, Math.floor(at / TEN_MINUTES), () => this.prune(now)),
        c,
      );
    bump(
      bucketOf(this.weekHours, Math.floor(at / HOUR), () => this.prune(now)),
      c,
    );
  }

  clear(): void {
    this.tens.clear();
    this.weekHours.clear();
  }

  /** The last 24 hours in 10-minute bars or the last 7 days in hourly bars, the newest (current) one last. */
  histogram(range: HistogramRange): Histogram {
    const now = this.now();
    this.prune(now);
    const [bucketMs, count, map] =
      range === '24h' ? [TEN_MINUTES, DAY_BUCKETS, this.tens] : [HOUR, WEEK_BUCKETS, this.weekHours];
    const first = Math.floor(now / bucketMs) - count + 1;
    const buckets = Array.from({ length: count }, (_, i) => [...(map.get(first + i) ?? [0, 0, 0, 0, 0])]);
    return { range, bucketMs, from: new Date(first * bucketMs).toISOString(), buckets };
  }

  /** Buckets held. */
  get size(): number {
    return this.tens.size + this.weekHours.size;
  }

  prune(now: number): void {
    const oldTen = Math.floor((now - DAY) / TEN_MINUTES) - 1;
    for (const t of this.tens.keys()) if (t < oldTen) this.tens.delete(t);
    const oldWeekHour = Math.floor((now - WEEK) / HOUR) - 1;
    for (const h of this.weekHours.keys()) if (h < oldWeekHour) this.weekHours.delete(h);
    // Bounded even if the clock jumps (or records come stamped in the future): never more buckets than the
    // windows hold twice over.
    if (this.tens.size > DAY_BUCKETS * 2) this.tens.clear();
    if (this.weekHours.size > WEEK_BUCKETS * 2) this.weekHours.clear();
  }
}

/** A record's criticality as counted: an integer 0-4, else 0. */
export function countedCriticality(value: unknown): number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 4 ? (value as number) : 0;
}

export class RecentCounts {
  private readonly minutes = new Map<number, number[]>();
  private readonly bars: HistogramCounts;
  private readonly hours = new Map<number, HourTop>();

  constructor(private readonly now: () => number = Date.now) {
    this.bars = new HistogramCounts(now);
  }

  /** O(1): a few map look-ups and one step of each sketch. */
  add(record: StoredRecord): void {
    if (!isThreatRecord(record)) return;
    const at = Date.parse(record.received_at);
    const now = this.now();
    if (!(at > now - WEEK - HOUR)) return;
    const c = countedCriticality(record.criticality);
    if (at > now - HOUR - MINUTE)
      bump(
        bucketOf(this.minutes, Math.floor(at / MINUTE), () => this.prune(now)),
        c,
      );
    this.bars.add(at, c);
    const h = Math.floor(at / HOUR);
    if (h < Math.floor((now - DAY) / HOUR)) return;
    let top = this.hours.get(h);
    if (!top) {
      top = {
        threats: new SpaceSaving(TOP_CAPACITY),
        sources: new SpaceSaving(TOP_CAPACITY),
        countries: new SpaceSaving(TOP_CAPACITY),
        asns: new SpaceSaving<number>(TOP_CAPACITY),
      };
      this.hours.set(h, top);
      this.prune(now);
    }
    top.threats.add(nameOf(record.threat));
    top.sources.add(nameOf(record.src_ip));
    if (typeof record.src_country === 'string') top.countries.add(nameOf(record.src_country));
    if (typeof record.src_asn === 'number') top.asns.add(record.src_asn, nameOf(record.src_as_org));
  }

  /** Forgets everything (before counting the store again). */
  clear(): void {
    this.minutes.clear();
    this.bars.clear();
    this.hours.clear();
  }

  /** The last 24 hours in 10-minute bars or the last 7 days in hourly bars, the newest (current) one last. */
  histogram(range: HistogramRange): Histogram {
    this.prune(this.now());
    return this.bars.histogram(range);
  }

  /** O(hours × TOP_CAPACITY), whatever was counted. */
  summary(top = 10): RecentSummary {
    const now = this.now();
    this.prune(now);
    const fromMinute = Math.floor((now - HOUR) / MINUTE);
    const fromTen = Math.floor((now - DAY) / TEN_MINUTES);
    // The top lists go by whole hours: the oldest hour may reach up to an hour further back than 24 h.
    const fromHour = Math.floor((now - DAY) / HOUR);
    const tops = [...this.hours].filter(([h]) => h >= fromHour).map(([, t]) => t);
    const listOf = (sketch: (typeof SKETCHES)[number]) =>
      topOf(
        tops.map((t) => (sketch === 'asns' ? asEntries(t.asns) : t[sketch].entries())),
        top,
      );
    return {
      generatedAt: new Date(now).toISOString(),
      lastHour: sumAfter(this.minutes, fromMinute),
      lastDay: sumAfter(this.bars.tens, fromTen),
      topThreats: listOf('threats'),
      topSources: listOf('sources'),
      topCountries: listOf('countries'),
      topAsns: listOf('asns'),
      topApproximate: tops.some((t) => SKETCHES.some((k) => t[k].evicted)),
    };
  }

  /** What the counts hold, for the bounds the tests check: names and their characters. */
  retained(): { buckets: number; names: number; chars: number } {
    let names = 0;
    let chars = 0;
    for (const t of this.hours.values()) {
      for (const s of SKETCHES.map((k) => t[k])) {
        names += s.size.names;
        chars += s.size.chars;
      }
    }
    return {
      buckets: this.minutes.size + this.bars.size + this.hours.size,
      names,
      chars,
    };
  }

  private prune(now: number): void {
    const oldMinute = Math.floor((now - HOUR) / MINUTE) - 1;
    for (const m of this.minutes.keys()) if (m < oldMinute) this.minutes.delete(m);
    this.bars.prune(now);
    const oldHour = Math.floor((now - DAY) / HOUR);
    for (const h of this.hours.keys()) if (h < oldHour) this.hours.delete(h);
    // Bounded even if the clock jumps (or records come stamped in the future): never more buckets than the
    // windows hold twice over.
    if (this.minutes.size > HOUR_BUCKETS * 2) this.minutes.clear();
    if (this.hours.size > TOP_HOURS * 2) this.hours.clear();
  }
}

/** The bucket at `key`, made (then `pruned`) when new. */
function bucketOf(map: Map<number, number[]>, key: number, pruned: () => void): number[] {
  let counts = map.get(key);
  if (!counts) {
    counts = [0, 0, 0, 0, 0];
    map.set(key, counts);
    pruned();
  }
  return counts;
}

function bump(counts: number[], c: number): void {
  counts[c] = (counts[c] as number) + 1;
}

function sumAfter(buckets: Map<number, number[]>, from: number): number[] {
  const sum = [0, 0, 0, 0, 0];
  for (const [k, counts] of buckets) {
    if (k > from) for (let i = 0; i < 5; i++) sum[i] = (sum[i] as number) + (counts[i] as number);
  }
  return sum;
}

/** A name as counted: cut to MAX_NAME_CHARS, marked with "…" when cut; not a string counts as "". */
function nameOf(value: unknown): string {
  if (typeof value !== 'string') return '';
  if (value.length <= MAX_NAME_CHARS) return value;
  // Never half of a surrogate pair (an emoji) at the cut: the page would show a replacement character.
  const last = value.charCodeAt(MAX_NAME_CHARS - 1);
  const cut = last >= 0xd800 && last <= 0xdbff ? MAX_NAME_CHARS - 1 : MAX_NAME_CHARS;
  return `${value.slice(0, cut)}…`;
}

/** An hour's ASes named as listed: `AS15169 GOOGLE`, or `AS15169` when no record said its name. */
function asEntries(asns: SpaceSaving<number>): SketchEntry[] {
  return asns
    .keyedEntries()
    .map((e) => ({ name: nameOf(e.label === '' ? `AS${e.key}` : `AS${e.key} ${e.label}`), count: e.count }));
}

/** The `n` largest counts summed over the hours' sketches, ties by name. */
export function topOf(hours: SketchEntry[][], n: number): TopEntry[] {
  const sums = new Map<string, number>();
  for (const entries of hours) for (const e of entries) sums.set(e.name, (sums.get(e.name) ?? 0) + e.count);
  return [...sums]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, n)
    .map(([name, count]) => ({ name, count }));
}
