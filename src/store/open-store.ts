// Picks the store backend from `store.backend`: the files in the data directory (default), or NATS
// JetStream, loaded only when configured so a files-only collector never loads the NATS client.
import type { Config } from '../config/schema.js';
import { openFileStore } from './file-store.js';
import type { Store, StoreDeps } from './store.js';

export async function openStore(config: Config, deps: StoreDeps): Promise<Store> {
  if (config.store.backend !== 'nats') return openFileStore(config, deps);
  const { openNatsStore } = await import('./nats/open-nats-store.js');
  return openNatsStore(config, deps);
}
