// Picks the store backend from `store.backend`: the files in the data directory (default), or NATS
// JetStream, loaded only when configured so a files-only collector never loads the NATS client.
import type { Config } from '../config/schema.js';
import { ThreatcolError } from '../errors.js';
import { openFileStore } from './file-store.js';
import type { Store, StoreDeps } from './store.js';

export async function openStore(config: Config, deps: StoreDeps): Promise<Store> {
  if (config.store.backend !== 'nats') return openFileStore(config, deps);
  let backend: { openNatsStore(config: Config, deps: StoreDeps): Promise<Store> };
  try {
    // A variable specifier: the NATS backend is built on its own branch and may be absent from this build.
    const path = './nats/open-nats-store.js';
    backend = (await import(path)) as typeof backend;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ThreatcolError(
      'CONFIG_INVALID',
      'store.backend is "nats", but the nats backend is not available in this build',
      { cause: error },
    );
  }
  return backend.openNatsStore(config, deps);
}
