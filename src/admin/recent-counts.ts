// Rolling counts for the dashboard: records by criticality over the last hour and 24 hours, top threats and
// top source addresses over 24 hours, kept in time buckets so a summary never rescans the store.
import type { StoredRecord } from '../records/stored-record.js';

const MINUTE = 60_000;
const TEN_MINUTES = 10 * MINUTE;
const HOUR_BUCKETS = 60;
const DAY_BUCKETS = 144;
/** Distinct threats or sources kept per 10-minute bucket; the rest is counted under "(other)". */
const MAX_KEYS_PER_BUCKET = 2000;
export const OTHER = '(other)';

interface DayBucket {
  byCriticality: number[];
  threats: Map<string, number>;
  sources: Map<string, number>;
}

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
}

export class RecentCounts {
  private readonly minutes = new Map<number, number[]>();
  private readonly tens = new Map<number, DayBucket>();

  constructor(private readonly now: () => number = Date.now) {}

  add(record: StoredRecord): void {
    const at = Date.parse(record.received_at);
    const now = this.now();
    if (!(at > now - 24 * 3_600_000 - TEN_MINUTES)) return;
    const c =
      Number.isInteger(record.criticality) && record.criticality >= 0 && record.criticality <= 4
        ? record.criticality
        : 0;
    if (at > now - 3_600_000 - MINUTE) {
      const m = Math.floor(at / MINUTE);
      let counts = this.minutes.get(m);
      if (!counts) {
        counts = [0, 0, 0, 0, 0];
        this.minutes.set(m, counts);
        this.prune(now);
      }
      counts[c] = (counts[c] as number) + 1;
    }
    const t = Math.floor(at / TEN_MINUTES);
    let bucket = this.tens.get(t);
    if (!bucket) {
      bucket = { byCriticality: [0, 0, 0, 0, 0], threats: new Map(), sources: new Map() };
      this.tens.set(t, bucket);
      this.prune(now);
    }
    bucket.byCriticality[c] = (bucket.byCriticality[c] as number) + 1;
    bump(bucket.threats, typeof record.threat === 'string' ? record.threat : '');
    bump(bucket.sources, typeof record.src_ip === 'string' ? record.src_ip : '');
  }

  /** Forgets everything (before counting the store again). */
  clear(): void {
    this.minutes.clear();
    this.tens.clear();
  }

  summary(top = 10): RecentSummary {
    const now = this.now();
    this.prune(now);
    const lastHour = [0, 0, 0, 0, 0];
    const fromMinute = Math.floor((now - 3_600_000) / MINUTE);
    for (const [m, counts] of this.minutes) {
      if (m > fromMinute)
        for (let i = 0; i < 5; i++) lastHour[i] = (lastHour[i] as number) + (counts[i] as number);
    }
    const lastDay = [0, 0, 0, 0, 0];
    const threats = new Map<string, number>();
    const sources = new Map<string, number>();
    const fromTen = Math.floor((now - 24 * 3_600_000) / TEN_MINUTES);
    for (const [t, b] of this.tens) {
      if (t <= fromTen) continue;
      for (let i = 0; i < 5; i++) lastDay[i] = (lastDay[i] as number) + (b.byCriticality[i] as number);
      for (const [k, n] of b.threats) threats.set(k, (threats.get(k) ?? 0) + n);
      for (const [k, n] of b.sources) sources.set(k, (sources.get(k) ?? 0) + n);
    }
    return {
      generatedAt: new Date(now).toISOString(),
      lastHour,
      lastDay,
      topThreats: topOf(threats, top),
      topSources: topOf(sources, top),
    };
  }

  private prune(now: number): void {
    const oldMinute = Math.floor((now - 3_600_000) / MINUTE) - 1;
    for (const m of this.minutes.keys()) if (m < oldMinute) this.minutes.delete(m);
    const oldTen = Math.floor((now - 24 * 3_600_000) / TEN_MINUTES) - 1;
    for (const t of this.tens.keys()) if (t < oldTen) this.tens.delete(t);
    // Bounded even if the clock jumps: never more buckets than the windows hold.
    if (this.minutes.size > HOUR_BUCKETS * 2) this.minutes.clear();
    if (this.tens.size > DAY_BUCKETS * 2) this.tens.clear();
  }
}

function bump(map: Map<string, number>, key: string): void {
  const n = map.get(key);
  if (n !== undefined) map.set(key, n + 1);
  else if (map.size < MAX_KEYS_PER_BUCKET) map.set(key, 1);
  else map.set(OTHER, (map.get(OTHER) ?? 0) + 1);
}

/** The `n` largest counts, ties by name; "(other)" never takes a place in the list. */
export function topOf(map: Map<string, number>, n: number): TopEntry[] {
  return [...map]
    .filter(([name]) => name !== OTHER)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, n)
    .map(([name, count]) => ({ name, count }));
}
