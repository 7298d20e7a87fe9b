// The free-space floor of the record store: below store.minFreeBytes requests get 503 instead of filling the disk.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ThreatcolError } from '../../errors.js';

export interface FreeSpaceGuardOptions {
  /** A directory on the filesystem to watch (the segments' directory). */
  path: string;
  minFreeBytes: number;
  freeBytes: (path: string) => Promise<number>;
  logger: Logger;
  /** statfs is asked at most this often; in between, bytes written since the last answer are subtracted. */
  refreshMs?: number;
  /** While below the floor, one log line per this interval. */
  logIntervalMs?: number;
}

const RETRY_AFTER_S = '10';

export class FreeSpaceGuard {
  private free = Number.POSITIVE_INFINITY;
  private writtenSince = 0;
  /** Monotonic time of the last statfs answer; -Infinity: never asked. */
  private checkedAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | null = null;
  private low = false;
  private loggedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: FreeSpaceGuardOptions) {}

  /** Throws UNAVAILABLE (with Retry-After) while the filesystem is below the floor. */
  async ensureRoom(): Promise<void> {
    if (this.stale()) await this.refresh();
    this.check();
  }

  /** True when statfs must be asked again before `check()` can answer (at most once per refreshMs). */
  stale(): boolean {
    const { minFreeBytes, refreshMs = 1000 } = this.options;
    return minFreeBytes > 0 && performance.now() - this.checkedAt >= refreshMs;
  }

  /** ensureRoom without asking statfs: the last answer less the bytes written since. */
  check(): void {
    const { minFreeBytes } = this.options;
    if (minFreeBytes <= 0) return;
    const free = this.free - this.writtenSince;
    if (free >= minFreeBytes) {
      if (this.low) {
        this.low = false;
        this.options.logger.info(
          { freeBytes: free, minFreeBytes },
          'free space is back above the floor; storing again',
        );
      }
      return;
    }
    const now = performance.now();
    if (!this.low || now - this.loggedAt >= (this.options.logIntervalMs ?? 60_000)) {
      this.loggedAt = now;
      this.options.logger.error(
        { freeBytes: Math.max(0, free), minFreeBytes, path: this.options.path },
        'free space on the data directory is below store.minFreeBytes; answering 503 until space returns',
      );
    }
    this.low = true;
    throw new ThreatcolError(
      'UNAVAILABLE',
      'the collector is low on disk space and cannot store records right now; retry later',
      { headers: { 'Retry-After': RETRY_AFTER_S } },
    );
  }

  /** Counts bytes the store wrote, so the cached answer stays conservative between two statfs calls. */
  wrote(bytes: number): void {
    this.writtenSince += bytes;
  }

  private refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      const counted = this.writtenSince;
      try {
        this.free = await this.options.freeBytes(this.options.path);
      } catch (error) {
        // A filesystem that cannot report its free space must not stop the collector: no floor then.
        this.free = Number.POSITIVE_INFINITY;
        this.options.logger.warn({ err: (error as Error).message }, 'cannot read free space (statfs)');
      }
      this.writtenSince -= counted;
      this.checkedAt = performance.now();
      this.refreshing = null;
    })();
    return this.refreshing;
  }
}
