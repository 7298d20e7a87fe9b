// Retention: deletes the oldest record segments past the age or total-size bound, never one being written;
// run by the files backend's writer at open and then periodically (with `--workers`, only worker 1's).
import { statSync, unlinkSync } from 'node:fs';
import type { Logger } from 'pino';
import { syncDir } from '../../data-dir/file-owner.js';
import type { SegmentHold } from './output-holds.js';
import { listSegments, type SegmentName, seriesOf, threatsDir } from './segments.js';

const DAY_MS = 86_400_000;

export interface RetentionBounds {
  /** Segments whose records are all older than this many days go; null: no age bound. */
  days: number | null;
  /** The oldest segments go while all segments together are larger than this; null: no size bound. */
  maxBytes: number | null;
}

export interface RemovedSegment {
  file: string;
  bytes: number;
  reason: 'age' | 'size';
}

export interface RetentionResult {
  removed: RemovedSegment[];
  keptSegments: number;
  keptBytes: number;
  /** The age pass was skipped this run because the clock looked wrong (see clockSuspect). */
  ageSkipped: boolean;
}

export interface ApplyRetentionOptions extends RetentionBounds {
  dataDir: string;
  now: number;
  /** File name of the segment the record log is writing (never deleted); each writer's newest is kept anyway. */
  current?: string | null;
  /** `now` of the previous run in this process (null: first run), and the interval between runs. */
  lastRunAt?: number | null;
  intervalMs?: number;
  /** The outputs' claim on segments they have not passed (DESIGN 13), made from the segments listed. */
  hold?: (segments: readonly SegmentName[]) => SegmentHold;
}

/**
 * A segment named YYYYMMDD-… holds only records received on that UTC day, so all of them are older than
 * `days` once the day's end is. Size: delete oldest first until the rest fits, keeping each writer's newest.
 */
export function applyRetention(options: ApplyRetentionOptions): RetentionResult {
  const dir = threatsDir(options.dataDir);
  const segments = listSegments(dir).map((s) => ({ ...s, bytes: sizeOf(s.path) }));
  // A writer only ever appends to the newest segment of its own series (the single process, or one worker of
  // `serve --workers`): keeping every series' newest keeps every segment that may be being written.
  const newestOfSeries = new Map<string, string>();
  for (const s of segments) newestOfSeries.set(seriesOf(s), s.file);
  const protectedFiles = new Set<string | undefined>([
    ...newestOfSeries.values(),
    options.current ?? undefined,
  ]);
  const hold = options.hold?.(segments);
  const removable = (segment: SegmentName) => !protectedFiles.has(segment.file) && !hold?.keeps(segment);
  const removed: RemovedSegment[] = [];
  const remove = (segment: (typeof segments)[number], reason: RemovedSegment['reason']): void => {
    hold?.removing(segment);
    try {
      unlinkSync(segment.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    removed.push({ file: segment.file, bytes: segment.bytes, reason });
  };

  let kept = segments;
  const ageSkipped = options.days !== null && clockSuspect(options, segments.at(-1)?.day);
  if (options.days !== null && !ageSkipped) {
    const cutoff = options.now - options.days * DAY_MS;
    kept = [];
    for (const segment of segments) {
      if (dayEnd(segment.day) <= cutoff && removable(segment)) remove(segment, 'age');
      else kept.push(segment);
    }
  }
  let total = kept.reduce((sum, s) => sum + s.bytes, 0);
  if (options.maxBytes !== null) {
    const rest = [];
    for (const segment of kept) {
      if (total > options.maxBytes && removable(segment)) {
        remove(segment, 'size');
        total -= segment.bytes;
      } else {
        rest.push(segment);
      }
    }
    kept = rest;
  }
  if (removed.length > 0) syncDir(dir);
  return { removed, keptSegments: kept.length, keptBytes: total, ageSkipped };
}

/**
 * A clock that jumped forward (a wrong RTC at boot, a bad NTP step) would age out the whole store at once.
 * The age pass waits one run when the clock looks wrong: at the first run, when it is more than a day past
 * the newest segment; later, when more than a day more than the interval passed since the previous run.
 * A store that was really idle that long is aged out one run later.
 */
function clockSuspect(options: ApplyRetentionOptions, newestDay: string | undefined): boolean {
  const last = options.lastRunAt ?? null;
  if (last === null) return newestDay !== undefined && options.now > dayEnd(newestDay) + DAY_MS;
  return options.now - last > (options.intervalMs ?? DAY_MS) + DAY_MS;
}

function dayEnd(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8))) + DAY_MS;
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Applies retention now and every `intervalMs` (0: only now), logging what it removed. */
export function startRetention(options: {
  dataDir: string;
  bounds: RetentionBounds;
  logger: Logger;
  now: () => number;
  intervalMs: number;
  current: () => string | null;
  hold?: ApplyRetentionOptions['hold'];
}): { stop(): void } {
  const { bounds, logger } = options;
  if (bounds.days === null && bounds.maxBytes === null) return { stop() {} };
  let lastRunAt: number | null = null;
  const run = () => {
    try {
      const now = options.now();
      const result = applyRetention({
        dataDir: options.dataDir,
        ...bounds,
        now,
        current: options.current(),
        lastRunAt,
        intervalMs: options.intervalMs,
        ...(options.hold ? { hold: options.hold } : {}),
      });
      lastRunAt = now;
      if (result.ageSkipped) {
        logger.warn(
          { now: new Date(now).toISOString() },
          'the clock is far ahead of the newest records or jumped forward; age-based retention waits for the next run',
        );
      }
      for (const r of result.removed) {
        logger.info(
          { segment: r.file, bytes: r.bytes, reason: r.reason, retention: bounds },
          'removed a record segment past retention',
        );
      }
      if (result.removed.length > 0) {
        logger.info(
          {
            removedSegments: result.removed.length,
            removedBytes: result.removed.reduce((sum, r) => sum + r.bytes, 0),
            keptSegments: result.keptSegments,
            keptBytes: result.keptBytes,
          },
          'retention applied',
        );
      }
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'retention failed; will try again');
    }
  };
  run();
  if (options.intervalMs <= 0) return { stop() {} };
  const timer = setInterval(run, options.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
