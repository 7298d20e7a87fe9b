// The decisions engine of one collector box (the single serving process, or the primary under --workers): its
// cursor's name, and the engine started with the box's configuration.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { writeFileAtomic } from '../data-dir/file-owner.js';
import { DECISIONS_CURSOR } from '../store/decisions.js';
import type { Store } from '../store/store.js';
import { type RunningEngine, startDecisionEngine } from './engine.js';

const BOX_ID_FILE = 'decisions-engine-id';

/**
 * Files: `@decisions` (one box per data directory). NATS: `@decisions-<box>`, one cursor per collector: an
 * output's consumer is shared by the collectors of a cluster, each record handed to one of them, while every
 * engine must count every record (they then make the same decisions from the same records).
 */
export function engineCursor(config: Config, dataDir: string): string {
  if (config.store.backend !== 'nats') return DECISIONS_CURSOR;
  const path = join(dataDir, BOX_ID_FILE);
  let id = '';
  try {
    id = readFileSync(path, 'utf8').trim();
  } catch {
    // First start: made below.
  }
  if (!/^[A-Za-z0-9_-]{1,60}$/.test(id)) {
    id = `${hostname()
      .replace(/[^A-Za-z0-9_-]/g, '-')
      .slice(0, 40)}-${randomBytes(4).toString('hex')}`;
    writeFileAtomic(path, `${id}\n`, 0o644, null);
  }
  return `${DECISIONS_CURSOR}-${id}`;
}

export function startBoxEngine(options: {
  config: Config;
  dataDir: string;
  store: Pick<Store, 'outputs' | 'decisions' | 'reader'>;
  logger: Logger;
  now?: () => number;
}): RunningEngine {
  return startDecisionEngine({
    store: options.store,
    blocklist: options.config.blocklist,
    cursor: engineCursor(options.config, options.dataDir),
    logger: options.logger,
    ...(options.now ? { now: options.now } : {}),
  });
}
