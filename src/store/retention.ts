// Retention: deletes the oldest record segments past the age or total-size bound, never the one being written.
import { statSync, unlinkSync } from 'node:fs';
import { syncDir } from './file-owner.js';
import { listSegments, threatsDir } from './segments.js';

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
}

export interface ApplyRetentionOptions extends RetentionBounds {
  dataDir: string;
  now: number;
  /** File name of the segment the record log is writing (never deleted); the newest segment is kept anyway. */
  current?: string | null;
}

/**
 * A segment named YYYYMMDD-… holds only records received on that UTC day, so all of them are older than
 * `days` once the day's end is. Size: delete oldest first until the rest fits, keeping the newest segment.
 */
export function applyRetention(options: ApplyRetentionOptions): RetentionResult {
  const dir = threatsDir(options.dataDir);
  const segments = listSegments(dir).map((s) => ({ ...s, bytes: sizeOf(s.path) }));
  const newest = segments.at(-1)?.file;
  const protectedFiles = new Set([newest, options.current ?? undefined]);
  const removed: RemovedSegment[] = [];
  const remove = (segment: (typeof segments)[number], reason: RemovedSegment['reason']): void => {
    try {
      unlinkSync(segment.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    removed.push({ file: segment.file, bytes: segment.bytes, reason });
  };

  let kept = segments;
  if (options.days !== null) {
    // Age is measured from the newest segment's day when the clock runs ahead of it: a box that boots
    // with its clock years in the future must not delete the whole store before NTP corrects it.
    const newestDay = segments.at(-1)?.day;
    const reference = newestDay === undefined ? options.now : Math.min(options.now, dayEnd(newestDay));
    const cutoff = reference - options.days * DAY_MS;
    kept = [];
    for (const segment of segments) {
      if (!protectedFiles.has(segment.file) && dayEnd(segment.day) <= cutoff) remove(segment, 'age');
      else kept.push(segment);
    }
  }
  let total = kept.reduce((sum, s) => sum + s.bytes, 0);
  if (options.maxBytes !== null) {
    const rest = [];
    for (const segment of kept) {
      if (total > options.maxBytes && !protectedFiles.has(segment.file)) {
        remove(segment, 'size');
        total -= segment.bytes;
      } else {
        rest.push(segment);
      }
    }
    kept = rest;
  }
  if (removed.length > 0) syncDir(dir);
  return { removed, keptSegments: kept.length, keptBytes: total };
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
