// One follower of the store for the whole admin listener: feeds the dashboard's rolling counts and every
// open event stream, so N browser tabs cost one reader. Works for any backend (it reads through the seam).
import type { Logger } from 'pino';
import type { StoredRecord } from '../records/stored-record.js';
import type { RecordReader } from '../store/store.js';
import { RecentCounts } from './recent-counts.js';

/** After the store could not be read (NATS down, a directory gone), the follower starts again after this. */
const RETRY_MS = 5000;

export type FeedListener = (records: StoredRecord[]) => void;

export interface LiveFeed {
  readonly counts: RecentCounts;
  /** True once the last 24 hours were counted (the summary is partial before). */
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
}): LiveFeed {
  const now = options.now ?? Date.now;
  const counts = new RecentCounts(now);
  const listeners = new Set<FeedListener>();
  const abort = new AbortController();
  let warm = false;
  let started = false;

  /** Counts the last 24 hours and follows new records, until stopped or until reading fails. */
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
          now() - 24 * 3_600_000,
          (record) => {
            if (record.received_at < splitIso) counts.add(record);
          },
          runAbort.signal,
        )
        .then(() => {
          warm = !runAbort.signal.aborted;
        });
      await Promise.all([following, scanning]);
    } finally {
      runAbort.abort();
      abort.signal.removeEventListener('abort', stopRun);
    }
  }

  return {
    counts,
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
          options.logger.error(
            { err: error.message, retryMs: RETRY_MS },
            'the dashboard cannot read the records; trying again',
          );
          setTimeout(() => {
            if (!abort.signal.aborted) attempt();
          }, RETRY_MS).unref();
        });
      attempt();
    },
    stop() {
      abort.abort();
      listeners.clear();
    },
  };
}
