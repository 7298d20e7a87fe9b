// The files backend's OutputCursors: one cursor file per output in `<dataDir>/outputs/`, kept when the output
// leaves the configuration until `outputs forget` (DESIGN 13).
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Owner } from '../../data-dir/file-owner.js';
import { syncDir } from '../../data-dir/file-owner.js';
import { isOutputName } from '../decisions.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { OutputCursors, OutputPosition } from '../store.js';
import { openFileOutputFeed } from './output-feed.js';
import { skippedRecords } from './output-holds.js';
import { measureLag } from './output-lag.js';
import { cursorPath, outputsDir, positionsAt, readCursor, writeCursor } from './output-positions.js';
import { removeReplay, writeReplay } from './output-replay.js';
import { threatsDir } from './segments.js';

export function createFileOutputCursors(options: {
  dataDir: string;
  owner: () => Owner | null;
  now: () => number;
  logger?: Logger;
  /** Where lines that are not stored records are counted (the store's, shared with its reader). */
  skipped?: SkippedRecords;
}): OutputCursors {
  const { dataDir, now } = options;
  const threats = threatsDir(dataDir);
  return {
    openFeed: (feed) =>
      openFileOutputFeed({
        dataDir,
        threats,
        name: feed.name,
        owner: options.owner,
        match: feed.match ?? (() => true),
        check: feed.check ?? 'record',
        startAt: feed.startAt ?? 'now',
        now,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.skipped ? { skipped: options.skipped } : {}),
      }),

    async list(): Promise<OutputPosition[]> {
      const positions: OutputPosition[] = [];
      // The decisions engine's cursor (decisions.ts) is not an output's.
      for (const name of cursorNames(dataDir).filter(isOutputName)) {
        const cursor = readCursor(dataDir, name);
        if (!cursor) continue;
        const lag = await measureLag(threats, cursor.series);
        positions.push({
          name,
          position: Object.entries(cursor.series)
            .map(([, p]) => `${p.file}:${p.offset}`)
            .join(' '),
          lastId: cursor.lastId,
          lagRecords: lag.records,
          lagSeconds: lag.oldest === null ? 0 : Math.max(0, Math.round((now() - lag.oldest) / 1000)),
          skippedRecords: skippedRecords(dataDir, name),
        });
      }
      return positions;
    },

    async replay(name, since) {
      const previous = readCursor(dataDir, name);
      const series = await positionsAt(threats, since);
      // Not any feed's id: a running feed sees a foreign write and takes these positions at its next batch.
      const id = `replay-${randomUUID()}`;
      const at = new Date(now()).toISOString();
      mkdirSync(outputsDir(dataDir), { recursive: true, mode: 0o750 });
      writeReplay(dataDir, name, { id, series, at }, options.owner());
      writeCursor(
        dataDir,
        {
          version: 1,
          name,
          series,
          lastId: previous?.lastId ?? null,
          updatedAt: at,
          writer: id,
          replayId: id,
        },
        options.owner(),
      );
    },

    async forget(name) {
      removeReplay(dataDir, name);
      try {
        unlinkSync(cursorPath(dataDir, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
      syncDir(outputsDir(dataDir));
      return true;
    },
  };
}

/** Names of the outputs that have a cursor file, configured or not. */
export function cursorNames(dataDir: string): string[] {
  try {
    return readdirSync(outputsDir(dataDir))
      .filter((f) => f.endsWith('.cursor.json'))
      .map((f) => f.slice(0, -'.cursor.json'.length))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
