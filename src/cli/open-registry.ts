// The sensor registry a CLI command changes: the data directory's backend, files owned like the directory.
import { ensureDataDir } from '../store/data-dir.js';
import { createFileRegistry } from '../store/file-registry.js';
import type { SensorRegistry } from '../store/registry.js';

export function openCliRegistry(dataDir: string): SensorRegistry {
  return createFileRegistry({ dataDir, owner: ensureDataDir(dataDir) });
}
