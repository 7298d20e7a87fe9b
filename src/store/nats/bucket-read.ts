// Reading a whole KV bucket as it stands: every key's last entry from one consumer, checked whole, never a listing
// and then a get per key. Gets are spread over the replicas (a hung one loses its share while the cluster still
// counts it), and a listing and its gets are two reads that need not agree. The decisions, the registry and the
// sensors' statistics read their buckets through it.
import type { KV, KvEntry } from '@nats-io/kv';

/**
 * Hands `each` every key's last entry (removals' markers included), from one watcher's replay; `answered` marks
 * each answer from NATS, and `signal` stops the watcher. Throws when the replay ended before every entry came (its
 * consumer closed under it: a node lost, its leaders moving): what it delivered by then is never the bucket.
 */
export async function lastEntries(
  kv: KV,
  each: (entry: KvEntry) => void,
  answered: () => void = () => {},
  signal?: AbortSignal,
): Promise<void> {
  // An empty bucket delivers nothing to wait for (once written, a bucket keeps a marker per removed key).
  if ((await kv.status()).values === 0) return;
  answered();
  const watcher = await kv.watch({ key: '>' });
  answered();
  // A try given up stops its consumer, which would otherwise wait on.
  if (signal?.aborted) watcher.stop();
  else signal?.addEventListener('abort', () => watcher.stop(), { once: true });
  let whole = false;
  try {
    for await (const entry of watcher) {
      answered();
      each(entry);
      // Nothing pending after it: every key's entry was delivered.
      if (entry.delta === 0) {
        whole = true;
        break;
      }
    }
  } finally {
    watcher.stop();
  }
  if (!whole) throw new Error('the read ended before every entry was delivered');
}

/** A read with no answer from NATS for this long fails (the registry's and the statistics': the decisions' own). */
const QUIET_MS = 2000;

/** Every key's last entry, in one read that fails after QUIET_MS without an answer. */
export async function everyEntry(kv: KV): Promise<KvEntry[]> {
  const entries: KvEntry[] = [];
  await withQuietLimit(
    (answered, signal) => lastEntries(kv, (e) => entries.push(e), answered, signal),
    QUIET_MS,
  );
  return entries;
}

/**
 * Runs `work`, failing it when NATS gave no answer for `quietMs`: `answered()` marks each answer, and the
 * signal tells the work it was given up. A listing that never ends cannot hang.
 */
export function withQuietLimit<T>(
  work: (answered: () => void, signal: AbortSignal) => Promise<T>,
  quietMs: number,
): Promise<T> {
  const controller = new AbortController();
  let last = Date.now();
  let timer: NodeJS.Timeout | undefined;
  return new Promise<T>((resolve, reject) => {
    // Re-armed when it fires rather than at every answer (a read of 100,000 keys has as many answers).
    const check = () => {
      const left = last + quietMs - Date.now();
      if (left > 0) {
        timer = setTimeout(check, left);
        return;
      }
      controller.abort();
      reject(new Error(`no answer from NATS for ${quietMs} ms`));
    };
    timer = setTimeout(check, quietMs);
    work(() => {
      last = Date.now();
    }, controller.signal).then(resolve, reject);
  }).finally(() => clearTimeout(timer));
}
