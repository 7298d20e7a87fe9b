// One follower of the store for the whole admin listener: feeds the dashboard's rolling counts and every
// open event stream, so N browser tabs cost one reader. Works for any backend (it reads through the seam).
import type { Logger } from 'pino';
import type { StoredRecord } from '../records/stored-record.js';
import type { RecordReader } from '../store/store.js';
import { RecentCounts, type RecentSummary } from './recent-counts.js';

/**
 * After the store could not be read (NATS down, a directory gone), the follower starts again after this,
 * doubled after each failure up to RETRY_MAX_MS: each start counts 24 hours again, so a store that fails the
 * same way every time (one unreadable record) must not cost a day's scan every few seconds.
 */
const RETRY_MS = 5000;
const RETRY_MAX_MS = 5 * 60_000;

export type FeedListener = (records: StoredRecord[]) => void;

/**
 * A summary is computed at most once a second whatever the number of tabs or requests: its cost is bounded
 * (recent-counts.ts) but not free, and the event loop it runs on is the sensors' too.
 */
const SUMMARY_TTL_MS = 1000;

export interface LiveFeed {
  readonly counts: RecentCounts;
  /** The counts' summary (the top 10), at most SUMMARY_TTL_MS old. */
  summary(): RecentSummary;
  /** True once the last 7 days were counted (the summary and histograms are partial before). */
  readonly warm: boolean;
  subscribe(listener: FeedListener): () => void;
  start(): void;
  stop(): void;
}

export function createLiveFeed(options: {
  reader: RecordReader;
  logger: Logger;
  now?: () => number;
  pollIntervalMs?: number;
  /** Runs `retry` after `ms` (tests take the delays without waiting for them). */
  schedule?: (retry: () => void, ms: number) => void;
}): LiveFeed {
  const now = options.now ?? Date.now;
  const counts = new RecentCounts(now);
  const listeners = new Set<FeedListener>();
  const abort = new AbortController();
  let warm = false;
  let started = false;
  let failures = 0;
  let lastSummary: RecentSummary | null = null;
  let lastSummaryAt = 0;
  const schedule =
    options.schedule ??
    ((retry: () => void, ms: number) => {
      setTimeout(retry, ms).unref();
    });

  /** Counts the last 7 days and follows new records, until stopped or until reading fails. */
  async function run(): Promise<void> {
    warm = false;
    counts.clear();
    // One run's reads stop together: a failed scan must not leave its follower running beside the next.
    const runAbort = new AbortController();
    const stopRun = () => runAbort.abort();
    abort.signal.addEventListener('abort', stopRun, { once: true });
    try {
      const { cursor } = await options.reader.readRecent({ limit: 0, signal: runAbort.signal });
      // Records received before this instant are counted by the scan, the rest by the follower: a record
      // in flight across the instant may be counted by neither or both, which a summary can afford.
      const splitIso = new Date(now()).toISOString();
      const following = options.reader.follow(cursor, {
        signal: runAbort.signal,
        pollIntervalMs: options.pollIntervalMs ?? 500,
        onRecords: (batch) => {
          const records: StoredRecord[] = [];
          for (const { record } of batch) {
            if (record.received_at >= splitIso) counts.add(record);
            records.push(record);
          }
          for (const listener of listeners) listener(records);
        },
      });
      const scanning = options.reader
        .scan(
          // Seven days: the dashboard's week histogram; the other counts take only the last 24 hours of it.
          now() - 7 * 24 * 3_600_000,
          (record) => {
            if (record.received_at < splitIso) counts.add(record);
          },
          runAbort.signal,
        )
        .then(() => {
          warm = !runAbort.signal.aborted;
          if (warm) failures = 0;
        });
      await Promise.all([following, scanning]);
    } finally {
      runAbort.abort();
      abort.signal.removeEventListener('abort', stopRun);
    }
  }

  return {
    counts,
    summary() {
      const at = now();
      if (!lastSummary || at - lastSummaryAt >= SUMMARY_TTL_MS || at < lastSummaryAt) {
        lastSummary = counts.summary(10);
        lastSummaryAt = at;
      }
      return lastSummary;
    },
    get warm() {
      return warm;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      if (started) return;
      started = true;
      const attempt = () =>
        void run().catch((error: Error) => {
          if (abort.signal.aborted) return;
          const retryMs = Math.min(RETRY_MS * 2 ** failures, RETRY_MAX_MS);
          failures++;
          options.logger.error(
            { err: error.message, retryMs },
            'the dashboard cannot read the records; trying again',
          );
          schedule(() => {
            if (!abort.signal.aborted) attempt();
          }, retryMs);
        });
      attempt();
    },
    stop() {
      abort.abort();
      listeners.clear();
    },
  };
}
