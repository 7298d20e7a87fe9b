// Picks the store backend from `store.backend`: the files in the data directory (default), or NATS
// JetStream, loaded only when configured so a files-only collector never loads the NATS client. The one
// module outside a backend that knows both: everything else reaches a backend through here.
import type { Config } from '../config/schema.js';
import { openDedupeIndex, openFileStore } from './files/file-store.js';
import type { DedupeIndex, Store, StoreDeps } from './store.js';

// `store migrate` names the NATS servers it copies to, without their credentials (a pure function: importing
// it loads no NATS client).
export { redactServer } from './nats/names.js';

export async function openStore(config: Config, deps: StoreDeps): Promise<Store> {
  if (config.store.backend !== 'nats') return openFileStore(config, deps);
  const { openNatsStore } = await import('./nats/open-nats-store.js');
  return openNatsStore(config, deps);
}

/**
 * `serve --workers`: the one dedupe window the primary keeps for every worker, rebuilt from every worker's
 * newest segments before any worker takes a request. Null when deduplication is off, or with NATS, whose
 * stream deduplicates by message id.
 */
export async function openWorkersDedupeIndex(config: Config, deps: StoreDeps): Promise<DedupeIndex | null> {
  if (config.store.backend !== 'files') return null;
  return openDedupeIndex(config, deps.dataDir, deps.logger, deps.now ?? Date.now);
}
