// `outputs replay` in the files backend: the positions to go back to, in a file of their own beside the cursor
// (`NAME.replay.json`, with an id), so a feed writing its cursor at that moment cannot overwrite the request; a
// feed takes a replay whose id its cursor does not carry yet (DESIGN 13).
import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type Owner, writeFileAtomic } from '../../data-dir/file-owner.js';
import { outputsDir, type SeriesPosition } from './output-positions.js';

export interface ReplayFile {
  /** Also written into the cursor (`replayId`) of the feed that took it. */
  id: string;
  series: Record<string, SeriesPosition>;
  at: string;
}

function replayPath(dataDir: string, name: string): string {
  return join(outputsDir(dataDir), `${name}.replay.json`);
}

export function readReplay(dataDir: string, name: string): ReplayFile | null {
  try {
    const parsed = JSON.parse(readFileSync(replayPath(dataDir, name), 'utf8')) as ReplayFile;
    return parsed && typeof parsed.id === 'string' && typeof parsed.series === 'object' ? parsed : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Written atomically and durably, before the cursor: whichever cursor write lands last, the request stays. */
export function writeReplay(dataDir: string, name: string, replay: ReplayFile, owner: Owner | null): void {
  writeFileAtomic(replayPath(dataDir, name), `${JSON.stringify(replay)}\n`, 0o640, owner);
}

/** `outputs forget`: the request goes with the cursor. */
export function removeReplay(dataDir: string, name: string): void {
  try {
    unlinkSync(replayPath(dataDir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
