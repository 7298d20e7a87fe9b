// A RecordReader whose backend module is imported on first use: a command that opens the store for its sensors
// (`sensor list`, the completion's sensor names) does not load the segment readers.
import type { SkippedRecords } from './skipped-records.js';
import type { RecordReader } from './store.js';

/** `skipped` is the count the loaded reader adds to: none before it is loaded. */
export function lazyRecordReader(load: () => Promise<RecordReader>, skipped: SkippedRecords): RecordReader {
  let loaded: Promise<RecordReader> | null = null;
  const reader = () => {
    loaded ??= load();
    return loaded;
  };
  return {
    readRecent: async (options) => (await reader()).readRecent(options),
    follow: async (from, options) => (await reader()).follow(from, options),
    scan: async (since, visit, signal) => (await reader()).scan(since, visit, signal),
    skippedCount: () => skipped.count,
  };
}
