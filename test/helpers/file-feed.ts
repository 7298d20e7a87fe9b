// A files output feed over a test's data directory: from its first record, every record matched, each line
// parsed and shape-checked whole; `options` change any of that (a clock, a poll interval).
import { join } from 'node:path';
import { type FileFeedOptions, openFileOutputFeed } from '../../src/store/files/output-feed.js';
import type { OutputFeed } from '../../src/store/store.js';

export function openTestFeed(
  dataDir: string,
  name: string,
  options: Partial<FileFeedOptions> = {},
): Promise<OutputFeed> {
  return openFileOutputFeed({
    dataDir,
    threats: join(dataDir, 'threats'),
    name,
    owner: () => null,
    match: () => true,
    check: 'record',
    startAt: 0,
    now: Date.now,
    ...options,
  });
}
