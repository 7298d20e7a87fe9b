// Reading a whole KV bucket as it stands: every key's last entry from one consumer, checked whole, never a listing
// and then a get per key. Gets are spread over the replicas (a hung one loses its share while the cluster still
// counts it), and a listing and its gets are two reads that need not agree. The decisions, the registry and the
// sensors' statistics read their buckets through it.
import type { KV, KvEntry } from '@nats-io/kv';
import { ThreatcolError } from '../../errors.js';

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

/** A read's pauses between tries: doubling from this, up to a second. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 1000;

export interface RetriedRead<T> {
  /** The bucket (NATS unreachable: it rejects with the store's own UNAVAILABLE verdict, passed on as it is). */
  open: () => Promise<KV>;
  /** One try: marks each answer from NATS with `answered`, stops when `signal` says it was given up. */
  once: (kv: KV, answered: () => void, signal: AbortSignal) => Promise<T>;
  /** How long the read waits in all (nats.publishTimeoutMs), through an election of the cluster's leaders. */
  waitMs: number;
  /** The error when no try succeeded within waitMs (the store's UNAVAILABLE, exit 69). */
  unavailable: (what: string, error: unknown) => Error;
}

/**
 * A read of a bucket that outlives a node of the cluster lost: with its leaders moving, nats-server may answer
 * a listing or a get never, or end a replay before its end. Each try ends when no answer came for a third of
 * waitMs (250 ms to 2 s) and is tried again with a pause until waitMs have passed (a try under way then may take
 * its quiet time more); then the read fails `unavailable`, never with an internal error. The decisions, the
 * registry and the sensors' statistics read through it.
 */
export async function readWithRetries<T>(read: RetriedRead<T>): Promise<T> {
  const quietMs = readQuietMs(read.waitMs);
  const started = Date.now();
  const deadline = started + read.waitMs;
  for (let attempt = 1; ; attempt++) {
    let failure: unknown;
    try {
      const kv = await beforeDeadline(read.open(), deadline, read.waitMs);
      return await withQuietLimit((answered, signal) => read.once(kv, answered, signal), quietMs);
    } catch (error) {
      // Already the store's own verdict (NATS unreachable for publishTimeoutMs): as it is.
      if (error instanceof ThreatcolError) throw error;
      failure = error;
    }
    const pause = Math.min(FIRST_PAUSE_MS * 2 ** (attempt - 1), MAX_PAUSE_MS, deadline - Date.now());
    if (pause <= 0)
      throw read.unavailable(
        `no answer to a read within ${Date.now() - started} ms (${attempt} ${attempt === 1 ? 'try' : 'tries'})`,
        failure,
      );
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** How long one try of a read waits with no answer, for a read that waits `waitMs` in all. */
export function readQuietMs(waitMs: number): number {
  return Math.min(2000, Math.max(250, Math.round(waitMs / 3)));
}

/** Every key's last entry (removals' markers included), read as readWithRetries reads. */
export function everyEntry(read: Omit<RetriedRead<KvEntry[]>, 'once'>): Promise<KvEntry[]> {
  return readWithRetries({
    ...read,
    once: async (kv, answered, signal) => {
      const entries: KvEntry[] = [];
      await lastEntries(kv, (e) => entries.push(e), answered, signal);
      return entries;
    },
  });
}

/** `promise`, or a rejection once `deadline` has passed (the bucket did not open within waitMs). */
function beforeDeadline<T>(promise: Promise<T>, deadline: number, waitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the bucket did not open within ${waitMs} ms`)),
      Math.max(0, deadline - Date.now()),
    );
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The store's UNAVAILABLE for a read of bucket `name` that got no answer (`why`: the connection's state). */
export function unavailableRead(name: string, why?: () => string | null) {
  return (what: string, error: unknown): ThreatcolError => {
    const because = why?.();
    const detail = error instanceof Error ? error.message : String(error);
    // NATS known unreachable says first what the admin must fix (and reads as every other such refusal).
    return new ThreatcolError(
      'UNAVAILABLE',
      `${because ? `${because}; ` : ''}NATS bucket ${name}: ${what}: ${detail}`,
      {
        cause: error,
      },
    );
  };
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
