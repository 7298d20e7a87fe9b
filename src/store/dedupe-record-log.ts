// Deduplication of retried deliveries for the files backend (DESIGN 10): a record whose dedupe key was
// stored within the window is answered with the first id and not written again. The key goes into the
// stored line (`dedupe_key`, last field) so that a restart, even after kill -9, rebuilds the window.
import type { Logger } from 'pino';
import type { StoredRecord } from '../records/stored-record.js';
import type { DedupeWindow } from './dedupe-window.js';
import type { AppendOptions, AppendResult, RecordLog } from './store.js';

export function withDedupe(
  inner: RecordLog,
  window: DedupeWindow,
  now: () => number,
  logger: Logger,
): RecordLog {
  let evictedLogged = 0;
  return {
    get queuedRecords() {
      return inner.queuedRecords;
    },
    close: () => inner.close(),

    async append(records: StoredRecord[], options: AppendOptions = {}): Promise<AppendResult> {
      const keys = options.dedupeKeys;
      if (keys === undefined) return inner.append(records);
      const at = now();
      const ids: string[] = [];
      const fresh: StoredRecord[] = [];
      const reserved: string[] = [];
      const waits: Promise<void>[] = [];
      let duplicates = 0;
      let settle: (error: Error | null) => void = () => {};
      const done = new Promise<void>((resolve, reject) => {
        settle = (error) => (error ? reject(error) : resolve());
      });
      // A waiter that gives up must not leave an unhandled rejection behind.
      done.catch(() => {});
      // One synchronous pass: a delivery only ever waits for reservations made before it, so never in a cycle.
      for (let i = 0; i < records.length; i++) {
        const record = records[i] as StoredRecord;
        const key = keys[i] ?? null;
        if (key === null) {
          ids.push(record.id);
          fresh.push(record);
          continue;
        }
        const hit = window.lookup(key, at);
        if (hit) {
          ids.push(hit.id);
          duplicates += 1;
          // The same record twice in this request: stored once, with this request.
          if (hit.pending && hit.pending !== done) waits.push(hit.pending);
          continue;
        }
        window.reserve(key, record.id, done);
        reserved.push(key);
        ids.push(record.id);
        // The record is this request's own, built for this append: the key is added in place (a spread copy
        // of its ~18 fields cost more than the key's SHA-256); JSON.stringify still puts it last.
        record.dedupe_key = key;
        fresh.push(record);
      }
      try {
        // An identical delivery still in flight: answer only once it is durable (its failure is ours).
        if (waits.length > 0) await Promise.all(waits);
        if (fresh.length > 0) await inner.append(fresh);
      } catch (error) {
        for (const key of reserved) window.settle(key, false, at);
        settle(error as Error);
        throw error;
      }
      const storedAt = now();
      for (const key of reserved) window.settle(key, true, storedAt);
      settle(null);
      if (window.evicted > evictedLogged) {
        logger.warn(
          { forgottenKeys: window.evicted - evictedLogged, windowMs: window.windowMs },
          'the dedupe window is full: the oldest keys were forgotten before the window ended',
        );
        evictedLogged = window.evicted;
      }
      return { ids, duplicates };
    },
  };
}
