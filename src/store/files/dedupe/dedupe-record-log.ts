// Deduplication of retried deliveries for the files backend (DESIGN 10): a record whose dedupe key was
// stored within the window is answered with the first id and not written again. The key goes into the
// stored line (`dedupe_key`, last field) so that a restart, even after kill -9, rebuilds the window.
import type { StoredRecord } from '../../../records/stored-record.js';
import type { AppendOptions, AppendResult, DedupeClaim, DedupeIndex, RecordLog } from '../../store.js';

export function withDedupe(inner: RecordLog, index: DedupeIndex): RecordLog {
  return {
    get queuedRecords() {
      return inner.queuedRecords;
    },
    close: () => inner.close(),

    async append(records: StoredRecord[], options: AppendOptions = {}): Promise<AppendResult> {
      const keys = options.dedupeKeys;
      if (keys === undefined) return inner.append(records);
      const pending = index.claim(
        keys,
        records.map((r) => r.id),
      );
      const claim: DedupeClaim = pending instanceof Promise ? await pending : pending;
      const ids: string[] = [];
      const fresh: StoredRecord[] = [];
      let duplicates = 0;
      for (let i = 0; i < records.length; i++) {
        const record = records[i] as StoredRecord;
        const first = claim.firstIds[i] ?? null;
        if (first !== null) {
          ids.push(first);
          duplicates += 1;
          continue;
        }
        ids.push(record.id);
        const key = keys[i] ?? null;
        // The record is this request's own, built for this append: the key is added in place (a spread copy
        // of its ~18 fields cost more than the key's SHA-256); JSON.stringify still puts it last.
        if (key !== null) record.dedupe_key = key;
        fresh.push(record);
      }
      try {
        if (fresh.length > 0) await inner.append(fresh);
      } catch (error) {
        claim.settle(error as Error);
        throw error;
      }
      claim.settle(null);
      return { ids, duplicates };
    },
  };
}
