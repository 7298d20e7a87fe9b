// Keeps a reader of a KV bucket current: a full read, then the KV watcher's live entries, a full read again now
// and then and after any watcher failure (a NATS node restart, an outage), reopened until stopped. The registry
// and the decisions watch their buckets through it.
import type { KV, KvEntry } from '@nats-io/kv';

export interface BucketWatchOptions {
  /** The bucket, once NATS is reachable (rejects otherwise: retried). */
  bucket: () => Promise<KV>;
  /**
   * Reads the whole bucket again, replacing what the reader keeps; resolves `false` when that changed nothing
   * (then `changed` is not called, but after the first read), anything else when it may have.
   */
  reread: () => Promise<unknown>;
  /** One live entry from the watcher. */
  take: (entry: KvEntry) => void;
  /** What the reader keeps changed: called once for a burst (the watcher's first replay, one batch of writes). */
  changed: () => void;
  /** A watcher that failed (it is reopened), or a `changed` that threw. */
  onError: (error: Error) => void;
  /** The full re-read's interval, besides the live watch. */
  rereadIntervalMs: number;
}

export interface BucketWatch {
  /** Reads the whole bucket again now (a failure goes to onError). */
  reload(): void;
  stop(): void;
}

/** How long a watcher that failed waits before it is opened again. */
const REOPEN_MS = 500;

export function watchBucket(options: BucketWatchOptions): BucketWatch {
  let stopped = false;
  let stopWatcher: (() => void) | null = null;
  let scheduled = false;

  /** Coalesces a burst of entries into one `changed`. */
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      if (stopped) return;
      // Called from a timer: a reader that throws on what it is given is reported, never ends the process.
      try {
        options.changed();
      } catch (error) {
        options.onError(error as Error);
      }
    });
  }

  /**
   * The full read under way, and the one asked for meanwhile: one at a time (a read waits up to publishTimeoutMs
   * through an election, longer than the interval may be), so reads neither pile up nor land out of order; one
   * asked during a read gets a read begun after it.
   */
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  /**
   * The live entries taken while a full read is under way, the last of each key: taken again on top of what the
   * read gives, which may be older than them (a revocation taken live, then undone by a read begun before it, for
   * up to the next read). Bounded by the keys written during one read. An entry older than what the read holds
   * for its key (a removal the read saw undone) is taken again too, until the watcher brings the newer one next,
   * as it does any change.
   */
  let takenDuringRead: Map<string, KvEntry> | null = null;
  /** Whether a full read was made: the first is always told, whatever it found. */
  let readOnce = false;
  /** Whether the read changed what the reader keeps (or is the first). */
  async function readWhole(): Promise<boolean> {
    const taken = new Map<string, KvEntry>();
    takenDuringRead = taken;
    try {
      const changed = await options.reread();
      // Where the read holds a newer value than the entry (written after it), the watcher brings that one next.
      for (const entry of taken.values()) options.take(entry);
      const first = !readOnce;
      readOnce = true;
      return changed !== false || taken.size > 0 || first;
    } finally {
      takenDuringRead = null;
    }
  }
  function reread(): Promise<void> {
    if (running === null) {
      running = readWhole()
        .then((changed) => {
          if (changed) schedule();
        })
        .finally(() => {
          running = null;
        });
      return running;
    }
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = null;
        return reread();
      });
    return queued;
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        const kv = await options.bucket();
        await reread();
        const watcher = await kv.watch({ key: '>' });
        stopWatcher = () => watcher.stop();
        if (stopped) watcher.stop();
        for await (const entry of watcher) {
          options.take(entry);
          takenDuringRead?.set(entry.key, entry);
          schedule();
        }
      } catch (error) {
        if (!stopped) options.onError(error as Error);
      }
      stopWatcher = null;
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, REOPEN_MS));
    }
  }
  void run();

  const timer = setInterval(() => void reread().catch(() => {}), options.rereadIntervalMs);
  timer.unref();

  return {
    reload() {
      void reread().catch(options.onError);
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      stopWatcher?.();
    },
  };
}
