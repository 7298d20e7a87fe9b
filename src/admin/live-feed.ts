// One follower of the store for the whole admin listener: feeds the dashboard's rolling counts and every
// open event stream, so N browser tabs cost one reader. Works for any backend (it reads through the seam).
import type { Logger } from 'pino';
import type { StoredRecord } from '../records/stored-record.js';
import type { RecordReader } from '../store/store.js';
import { RecentCounts } from './recent-counts.js';

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

  async function run(): Promise<void> {
    const { cursor } = await options.reader.readRecent({ limit: 0 });
    // Records received before this instant are counted by the scan, the rest by the follower: a record
    // in flight across the instant may be counted by neither or both, which a summary can afford.
    const splitIso = new Date(now()).toISOString();
    const following = options.reader.follow(cursor, {
      signal: abort.signal,
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
    await options.reader.scan(
      now() - 24 * 3_600_000,
      (record) => {
        if (record.received_at < splitIso) counts.add(record);
      },
      abort.signal,
    );
    warm = true;
    await following;
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
      void run().catch((error: Error) => {
        if (abort.signal.aborted) return;
        options.logger.error({ err: error.message }, 'the dashboard cannot read the records');
      });
    },
    stop() {
      abort.abort();
      listeners.clear();
    },
  };
}
