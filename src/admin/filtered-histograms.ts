// The dashboard's histogram for a view with filters (sensor, endpoint, threat, source, destination): the rolling
// counts hold every record but no breakdown by sensor or name, so a filtered histogram is counted apart, once,
// from the store's last 7 days, then kept up to date from the live feed. Bounded whatever the clients ask: at
// most MAX_FILTERED_HISTOGRAMS filters at a time (the least recently asked for goes), each fixed-size buckets
// (HistogramCounts), one dropped after IDLE_MS unasked (on a timer: its client may never ask for anything again);
// their reads of the store one at a time, aborted when the filter goes.

import { isThreatRecord, type StoredRecord } from '../records/stored-record.js';
import { recordMatcher } from '../store/record-filter.js';
import type { RecordFilter, RecordReader } from '../store/store.js';
import type { LiveFeed } from './live-feed.js';
import { ReadSlots } from './read-slots.js';
import { countedCriticality, type Histogram, HistogramCounts, type HistogramRange } from './recent-counts.js';

/** Filters counted at once; a page polls its one filter every 2 s, so a few tabs fit. */
export const MAX_FILTERED_HISTOGRAMS = 8;
/** A filtered histogram nobody asked for this long is dropped (the page asks every 2 s while open). */
export const IDLE_MS = 60_000;
/** How often the filters are looked at for idle ones, while there are any: dropped at most this late. */
const SWEEP_MS = 10_000;
/** Filters waiting to read the store behind the one reading. */
const READS_WAITING = MAX_FILTERED_HISTOGRAMS;
const WEEK_MS = 7 * 86_400_000;

/** The part of a view's filter a histogram is narrowed by: not the interval (a bar), not the criticality. */
/** The view filters that narrow a histogram (not `min`, which zeroes levels, nor an interval, which is a bar). */
const NARROWING = [
  'sensor',
  'endpoint',
  'threat',
  'src',
  'dst',
  'srcCountry',
  'srcAsn',
  'dstCountry',
  'dstAsn',
] as const;
export type HistogramFilter = Pick<RecordFilter, (typeof NARROWING)[number]>;

interface Entry {
  counts: HistogramCounts;
  complete: boolean;
  lastAsked: number;
  abort: AbortController;
  unsubscribe: () => void;
}

export interface FilteredHistograms {
  /** The filter's histogram (counted from the store on the first ask: `complete` false until then). */
  histogram(filter: HistogramFilter, range: HistogramRange): Histogram & { complete: boolean };
  /** Filters held now (for the bounds the tests check). */
  readonly size: number;
  stop(): void;
}

/** The narrowing part of `filter`, or null when it narrows nothing (the rolling counts answer). */
export function histogramFilter(filter: RecordFilter): HistogramFilter | null {
  const kept: HistogramFilter = {};
  for (const key of NARROWING) {
    const value = filter[key];
    if (value !== undefined) Object.assign(kept, { [key]: value });
  }
  return Object.keys(kept).length === 0 ? null : kept;
}

export function createFilteredHistograms(options: {
  reader: RecordReader;
  feed: LiveFeed;
  now?: () => number;
}): FilteredHistograms {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const reads = new ReadSlots(1, READS_WAITING);
  /** Runs while a filter is held: a page closed mid-scan asks no more, and its scan and subscription must end. */
  let sweeper: NodeJS.Timeout | null = null;

  function drop(key: string): void {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    entry.abort.abort();
    entry.unsubscribe();
    if (entries.size === 0 && sweeper !== null) {
      clearInterval(sweeper);
      sweeper = null;
    }
  }

  function dropIdle(): void {
    const at = now();
    for (const [key, entry] of entries) if (at - entry.lastAsked > IDLE_MS) drop(key);
  }

  function start(filter: HistogramFilter): Entry {
    const matching = recordMatcher(filter);
    const matches = (r: StoredRecord) => isThreatRecord(r) && matching(r);
    const counts = new HistogramCounts(now);
    const abort = new AbortController();
    // Records received before this instant are counted by the scan, the rest as the feed follows them (as the
    // rolling counts split them: live-feed.ts).
    const splitIso = new Date(now()).toISOString();
    const unsubscribe = options.feed.subscribe((records) => {
      for (const r of records)
        if (r.received_at >= splitIso && matches(r))
          counts.add(Date.parse(r.received_at), countedCriticality(r.criticality));
    });
    const entry: Entry = { counts, complete: false, lastAsked: now(), abort, unsubscribe };
    const slot = reads.reserve(abort.signal);
    if (slot === null) {
      // Cannot happen while the queue is as long as the filters kept; counted live only, never complete.
      return entry;
    }
    void slot.granted
      .then(() =>
        options.reader.scan(
          now() - WEEK_MS,
          (r) => {
            if (r.received_at < splitIso && matches(r))
              counts.add(Date.parse(r.received_at), countedCriticality(r.criticality));
          },
          abort.signal,
        ),
      )
      .then(() => {
        if (!abort.signal.aborted) entry.complete = true;
      })
      // A failed or aborted read leaves the histogram incomplete; asking again after it is dropped counts again.
      .catch(() => {})
      .finally(() => slot.release());
    return entry;
  }

  return {
    histogram(filter, range) {
      const at = now();
      dropIdle();
      const key = JSON.stringify(filter, Object.keys(filter).sort());
      let entry = entries.get(key);
      if (entry) {
        // Most recently asked last: the first is the one to drop.
        entries.delete(key);
        entries.set(key, entry);
        entry.lastAsked = at;
      } else {
        while (entries.size >= MAX_FILTERED_HISTOGRAMS) drop(entries.keys().next().value as string);
        entry = start(filter);
        entries.set(key, entry);
        if (sweeper === null) {
          sweeper = setInterval(dropIdle, SWEEP_MS);
          sweeper.unref();
        }
      }
      return { ...entry.counts.histogram(range), complete: entry.complete && options.feed.warm };
    },
    get size() {
      return entries.size;
    },
    stop() {
      for (const key of [...entries.keys()]) drop(key);
    },
  };
}
