// The decisions engine of one collector box (the single serving process, or the primary under --workers),
// started with the box's configuration; on NATS, under the cluster's lease.
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

/** This collector's id (hostname and random), made once and kept in the data directory. */
export function boxId(dataDir: string): string {
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
  return id;
}

/** A lease outlives its holder by this much: a collector that died is replaced within it. */
const LEASE_TTL_MS = 15_000;

export function startBoxEngine(options: {
  config: Config;
  dataDir: string;
  store: Pick<Store, 'outputs' | 'decisions' | 'reader'>;
  logger: Logger;
  now?: () => number;
}): RunningEngine {
  // NATS: one engine per cluster, the holder of the lease, reading the one shared cursor (a durable consumer:
  // what a leader that died had not acknowledged is handed to the next).
  const nats = options.config.store.backend === 'nats';
  return startDecisionEngine({
    store: options.store,
    blocklist: options.config.blocklist,
    cursor: DECISIONS_CURSOR,
    ...(nats ? { lease: { holder: boxId(options.dataDir), ttlMs: LEASE_TTL_MS } } : {}),
    logger: options.logger,
    ...(options.now ? { now: options.now } : {}),
  });
}
