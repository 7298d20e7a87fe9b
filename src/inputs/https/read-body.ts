// Reads a request body with the size bound checked while streaming (and after gzip decompression).
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import { ThreatcolError } from '../../errors.js';
import { InFlight, type InFlightEntry } from './in-flight.js';

/** Thrown when the client went away mid-body: there is nobody to answer. */
export class ClientGone extends Error {}

function tooLarge(limit: number): ThreatcolError {
  return new ThreatcolError('BODY_TOO_LARGE', `the request body is larger than ${limit} bytes`, {
    headers: { Connection: 'close' },
  });
}

/** Rejects at once when Content-Length already announces more than the limit. */
export function checkDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
}

/**
 * Bytes of request bodies held in memory by all requests together; bounds memory under any load. No single
 * sensor may hold more than `share` of it, so one sensor's stalled uploads cannot starve the others
 * (security finding 2). Bodies are read only after authentication, so every holder is a known sensor.
 */
export class BodyBudget {
  private used = 0;
  private readonly byHolder = new Map<string, number>();
  private readonly perHolder: number;

  constructor(
    private readonly limit: number,
    share = 0.25,
  ) {
    this.perHolder = Math.max(1, Math.floor(limit * share));
  }

  reserve(holder: string, bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    const held = this.byHolder.get(holder) ?? 0;
    if (held + bytes > this.perHolder) return false;
    this.byHolder.set(holder, held + bytes);
    this.used += bytes;
    return true;
  }

  /**
   * A holder's entry stays at 0 rather than being deleted: holders are registered sensors (bodies are read after
   * authentication), so the map is bounded, and a Map that every request adds to and deletes from keeps
   * rehashing into new tables that the garbage collector's young generation copies and promotes (see
   * in-flight.ts).
   */
  release(holder: string, bytes: number): void {
    if (bytes === 0) return;
    this.used -= bytes;
    this.byHolder.set(holder, Math.max(0, (this.byHolder.get(holder) ?? 0) - bytes));
  }
}

function overBudget(): ThreatcolError {
  return new ThreatcolError('UNAVAILABLE', 'the collector is overloaded; retry shortly', {
    headers: { 'Retry-After': '1', Connection: 'close' },
  });
}

function stalled(ms: number): ThreatcolError {
  return new ThreatcolError('REQUEST_TIMEOUT', `the request body made no progress for ${ms / 1000} s`, {
    headers: { Connection: 'close' },
  });
}

/** A body being read, as the stall watch sees it. */
interface WatchedRead {
  /** The watch's tick at the last progress (or the start). */
  tick: number;
  stall(): void;
}

/** Ticks per stall limit: a body is ended after 1 to 1.25 limits without progress. */
const TICKS = 4;

/**
 * Watches every body being read for stalls with one timer per stall limit, not a timer per body: a timer set and
 * cleared by every request churned node's timer lists (a list object made and dropped, a dictionary entry
 * added and deleted per request), which the young-generation GC then copied and promoted (see in-flight.ts).
 */
class StallWatch {
  private readonly reads = new InFlight<WatchedRead>();
  private timer: NodeJS.Timeout | null = null;
  tick = 0;

  constructor(private readonly stallMs: number) {}

  add(read: WatchedRead): InFlightEntry<WatchedRead> {
    read.tick = this.tick;
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), this.stallMs / TICKS);
      this.timer.unref();
    }
    return this.reads.add(read);
  }

  remove(entry: InFlightEntry<WatchedRead>): void {
    this.reads.delete(entry);
  }

  private sweep(): void {
    this.tick += 1;
    // Idle: the timer stops, and the next body starts it again.
    if (this.reads.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
      return;
    }
    for (const read of this.reads.values()) if (this.tick - read.tick > TICKS) read.stall();
  }
}

/** One watch per stall limit in use (a process normally has one). */
const watches = new Map<number, StallWatch>();

function stallWatch(stallMs: number): StallWatch {
  let watch = watches.get(stallMs);
  if (watch === undefined) {
    watch = new StallWatch(stallMs);
    watches.set(stallMs, watch);
  }
  return watch;
}

export interface BodyLimits {
  /** Largest body, after gzip decompression. */
  limit: number;
  /** A body that receives nothing for this long is ended with 408 (long before the whole-request timeout). */
  stallMs: number;
}

/**
 * Reads the whole body of `holder` (the sensor). The bytes it holds are reserved from `budget` and handed
 * back by `release()` once the caller is done with the body (or at once when reading fails).
 */
export function readBody(
  req: IncomingMessage,
  limits: BodyLimits,
  gzip: boolean,
  budget: BodyBudget,
  holder: string,
): Promise<{ body: Buffer; release: () => void }> {
  const limit = limits.limit;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let reserved = 0;
    let settled = false;
    const watch = stallWatch(limits.stallMs);
    const read: WatchedRead = {
      tick: 0,
      stall: () => {
        if (settled) return;
        if (gzip) (source as ReturnType<typeof createGunzip>).destroy();
        req.pause();
        settle(stalled(limits.stallMs));
      },
    };
    const watched = watch.add(read);
    const release = () => {
      budget.release(holder, reserved);
      reserved = 0;
    };
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      watch.remove(watched);
      req.off('aborted', onAborted);
      if (error) {
        release();
        reject(error);
      } else {
        resolve({ body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), release });
      }
    };
    const onAborted = () => settle(new ClientGone('client closed the connection'));
    req.on('aborted', onAborted);
    req.on('error', () => settle(new ClientGone('request stream error')));

    const source: NodeJS.ReadableStream = gzip ? req.pipe(createGunzip()) : req;
    const onData = (chunk: Buffer) => {
      if (settled) return;
      if (!gzip) read.tick = watch.tick;
      size += chunk.length;
      const failure =
        size > limit ? tooLarge(limit) : budget.reserve(holder, chunk.length) ? null : overBudget();
      if (failure) {
        if (gzip) (source as ReturnType<typeof createGunzip>).destroy();
        req.pause();
        settle(failure);
        return;
      }
      reserved += chunk.length;
      chunks.push(chunk);
    };
    source.on('data', onData);
    source.on('end', () => settle(null));
    if (gzip) {
      let compressed = 0;
      req.on('data', (chunk: Buffer) => {
        read.tick = watch.tick; // progress is bytes arriving, not bytes decompressed
        compressed += chunk.length;
        if (compressed > limit) {
          req.unpipe();
          req.pause();
          settle(tooLarge(limit));
        }
      });
      source.on('error', (error: Error) => {
        settle(
          new ThreatcolError(
            'INVALID_ENCODING',
            `the gzip body could not be decompressed: ${error.message}`,
            {
              cause: error,
            },
          ),
        );
      });
    }
  });
}
