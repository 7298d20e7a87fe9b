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

    append(records: StoredRecord[], options: AppendOptions = {}): Promise<AppendResult> {
      const keys = options.dedupeKeys;
      if (keys === undefined) return inner.append(records);
      const ids: string[] = new Array(records.length);
      for (let i = 0; i < records.length; i++) ids[i] = (records[i] as StoredRecord).id;
      const claimed = index.claim(keys, ids);
      // Plain functions, not an async one: nothing waits in the common case (no identical delivery in flight).
      if (claimed instanceof Promise)
        return claimed.then((claim) => appendFresh(inner, records, keys, ids, claim));
      return appendFresh(inner, records, keys, ids, claimed);
    },
  };
}

/** Stores the records the claim left to this append (all of them, nearly always), then settles the claim. */
function appendFresh(
  inner: RecordLog,
  records: StoredRecord[],
  keys: readonly (string | null)[],
  ids: string[],
  claim: DedupeClaim,
): Promise<AppendResult> {
  let fresh = records;
  let duplicates = 0;
  for (let i = 0; i < records.length; i++) {
    const first = claim.firstIds[i] ?? null;
    if (first !== null) {
      if (duplicates++ === 0) fresh = records.slice(0, i);
      ids[i] = first;
      continue;
    }
    const record = records[i] as StoredRecord;
    const key = keys[i] ?? null;
    // The record is this request's own, built for this append: the key is added in place (a spread copy
    // of its ~18 fields cost more than the key's SHA-256); JSON.stringify still puts it last.
    if (key !== null) record.dedupe_key = key;
    if (duplicates > 0) fresh.push(record);
  }
  // Nearly always every record is new: the inner append's own promise is the answer (its ids are these), and
  // the claim is settled through `settled`, not by a second promise per request.
  if (duplicates === 0) return inner.append(records, { settled: claim });
  const stored = fresh.length > 0 ? inner.append(fresh) : Promise.resolve();
  return stored.then(
    () => {
      claim.settle(null);
      return { ids, duplicates };
    },
    (error: Error) => {
      claim.settle(error);
      throw error;
    },
  );
}
