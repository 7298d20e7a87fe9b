// One output's feed in the files backend: hands over the records after its cursor in batches, merged across
// writer series by id, and moves the cursor file only when a batch is acked (DESIGN 13).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Owner } from '../../data-dir/file-owner.js';
import { type DirWatch, watchDir } from '../../watch-files.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { OutputBatch, OutputFeed, OutputLine, RecordHead } from '../store.js';
import { type GatherOptions, gather, type Positions } from './output-gather.js';
import {
  type CursorFile,
  checkPositions,
  endPositions,
  positionsAt,
  readCursor,
  type SeriesPosition,
  writeCursor,
  writeCursorAsync,
} from './output-positions.js';
import { readReplay } from './output-replay.js';
import { openSegmentTails } from './segment-tails.js';

/** While a batch fills, the segments are read again this often (not at every write of the writer). */
const FILL_PAUSE_MS = 50;
/** A feed that passes only records its filter refuses writes its cursor at most this often. */
const SKIP_WRITE_MS = 1000;

export interface FileFeedOptions {
  dataDir: string;
  threats: string;
  name: string;
  owner: () => Owner | null;
  match: (record: RecordHead) => boolean;
  /** How much of each line is checked (OutputFeedOptions). */
  check: 'record' | 'head';
  startAt: 'now' | number;
  pollIntervalMs?: number;
  now: () => number;
  logger?: Logger;
  /** Counts the lines that are not stored records (skipped, never handed over). */
  skipped?: SkippedRecords;
}

export async function openFileOutputFeed(options: FileFeedOptions): Promise<OutputFeed> {
  const { dataDir, name } = options;
  const writer = randomUUID();
  let cursor = readCursor(dataDir, name);
  if (!cursor) {
    // A new output: its start is made durable at once, so a restart does not move 'now' along.
    const series =
      options.startAt === 'now'
        ? await endPositions(options.threats)
        : await positionsAt(options.threats, options.startAt);
    cursor = {
      version: 1,
      name,
      series,
      lastId: null,
      updatedAt: new Date(options.now()).toISOString(),
      writer,
    };
    writeCursor(dataDir, cursor, options.owner());
  }
  const checked = await checkPositions(options.threats, cursor.series);
  if (checked.moved.length > 0) {
    options.logger?.warn(
      { output: name, moved: checked.moved },
      'a segment was cut back under the output position (power cut or failed write): resuming from the first record after the last one passed',
    );
    cursor = { ...cursor, series: checked.series, updatedAt: new Date(options.now()).toISOString(), writer };
    writeCursor(dataDir, cursor, options.owner());
  }
  let durable: CursorFile = cursor;
  const reading: GatherOptions = {
    threats: options.threats,
    tails: openSegmentTails(),
    check: options.check,
    ...(options.skipped ? { skipped: options.skipped } : {}),
  };
  /** The cursor file as this feed last read or wrote it: anything else on disk was written by someone else. */
  const stampOf = (c: CursorFile) => `${c.writer}/${c.updatedAt}`;
  let seen = stampOf(cursor);
  /** Positions past records the filter refused, ahead of `durable` (safe to lose: they are only re-read). */
  let passed: Positions = toMap(durable.series);
  let lastWrite = options.now();
  let changed = true;
  let wake: (() => void) | null = null;
  /**
   * The segments' directory is watched (inotify) only while the feed waits with nothing to read. A watch kept
   * open woke the reading thread at every group commit of the writer, hundreds to thousands of times a second
   * under load, while the feed filled its batch on its own timer or its reader worked on the last batch.
   */
  let watcher: DirWatch | null = null;
  const unwatch = () => {
    watcher?.stop();
    watcher = null;
  };
  /** Starts watching; true when it did (not there yet, or no inotify: the wait's own timer reads again). */
  const startWatching = (): boolean => {
    const started = watchDir(
      options.threats,
      () => {
        changed = true;
        wake?.();
      },
      () => {
        if (watcher === started) watcher = null;
      },
    );
    watcher = started;
    return started !== null;
  };

  /** Takes the positions `outputs replay` wrote while this feed ran; true when there were any. */
  const adoptForeign = (): boolean => {
    const replay = readReplay(dataDir, name);
    const onDisk = readCursor(dataDir, name);
    if (replay !== null && replay.id !== durable.replayId) {
      // Asked for and not taken yet: our own cursor write may have landed over the one the replay wrote.
      durable = { ...durable, series: replay.series, replayId: replay.id };
      if (onDisk) seen = stampOf(onDisk);
      passed = toMap(replay.series);
      return true;
    }
    if (!onDisk || stampOf(onDisk) === seen) return false;
    durable = onDisk;
    seen = stampOf(onDisk);
    passed = toMap(onDisk.series);
    return true;
  };

  const save = async (positions: Positions, lastId: string | null): Promise<void> => {
    // `outputs replay` (another process) wrote a position meanwhile: it wins over what this batch reached.
    if (adoptForeign()) return;
    durable = {
      version: 1,
      name,
      series: Object.fromEntries(positions),
      lastId: lastId ?? durable.lastId,
      updatedAt: new Date(options.now()).toISOString(),
      writer,
      ...(durable.replayId === undefined ? {} : { replayId: durable.replayId }),
    };
    await writeCursorAsync(dataDir, durable, options.owner());
    seen = stampOf(durable);
    passed = new Map(positions);
    lastWrite = options.now();
  };

  // Waits at most `ms` for the writer's next change. A wait that starts the watch returns at once: what was
  // written before it raised no event, so the caller reads once more first.
  const waitForChange = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (changed || signal.aborted || ms <= 0) return resolve();
      if (watcher === null && startWatching()) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
      wake = done;
    });

  return {
    async next({ maxRecords, maxBytes, waitMs, signal }): Promise<OutputBatch> {
      adoptForeign();
      let read = copied(passed);
      const records: OutputLine[] = [];
      let bytes = 0;
      let deadline: number | null = null;
      while (!signal.aborted) {
        changed = false;
        const full = await gather(reading, read, (c) => {
          if (c.entry === null || !options.match(c.entry.head)) return 'pass';
          const size = c.entry.byteLength + 1;
          if (records.length > 0 && (records.length >= maxRecords || bytes + size > maxBytes)) return 'stop';
          records.push(c.entry);
          bytes += size;
          return 'take';
        });
        if (records.length === 0) {
          // Only refused records so far: they are passed, and the cursor says so now and then.
          passed = copied(read);
          const before = passed;
          if (options.now() - lastWrite >= SKIP_WRITE_MS && differs(passed, durable.series))
            await save(passed, null);
          await waitForChange(options.pollIntervalMs ?? 500, signal);
          // `outputs replay` (another process) may have moved the position while nothing arrived: read from there.
          adoptForeign();
          if (passed !== before) read = copied(passed);
          continue;
        }
        // Filling a batch: read again after each pause until it is full or its time is up, unwatched.
        unwatch();
        if (full || records.length >= maxRecords || bytes >= maxBytes) break;
        deadline ??= options.now() + waitMs;
        const left = deadline - options.now();
        if (left <= 0) break;
        await delay(Math.min(left, FILL_PAUSE_MS), signal);
      }
      if (signal.aborted && records.length === 0) return { records: [], ack: async () => {} };
      const reached = copied(read);
      const lastId = records.at(-1)?.id ?? null;
      return {
        records,
        ack: async () => save(reached, lastId),
      };
    },
    async close() {
      unwatch();
      wake?.();
      await reading.tails.close();
    },
  };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

function toMap(series: Record<string, SeriesPosition>): Positions {
  return new Map(Object.entries(series).map(([k, p]) => [k, { ...p }]));
}

function differs(a: Positions, b: Record<string, SeriesPosition>): boolean {
  if (a.size !== Object.keys(b).length) return true;
  for (const [k, p] of a) if (b[k]?.file !== p.file || b[k]?.offset !== p.offset) return true;
  return false;
}

/** A copy of `positions` whose entries the reader may move on without touching the original's. */
function copied(positions: Positions): Positions {
  return new Map([...positions].map(([k, p]) => [k, { ...p }]));
}
