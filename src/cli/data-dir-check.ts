// Read-only and change commands refuse a data directory that does not exist (a typo is not an empty system).
import { existsSync } from 'node:fs';
import type { LoadedConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import type { CommonOptions } from './common-options.js';
import type { CliIo } from './io.js';

/** Where the data directory came from, in the words of the precedence docs/records.md documents. */
export function dataDirSource(options: CommonOptions, io: CliIo, configPath: string | null): string {
  if (options.dataDir !== undefined) return '--data-dir';
  if (io.env.THREATCOL_DATA_DIR) return 'THREATCOL_DATA_DIR';
  if (configPath !== null) return `dataDir in ${configPath}, or the default`;
  return 'the default';
}

/**
 * Throws NO_DATA_DIR when the files backend's data directory does not exist, naming it and the defaults that
 * were tried (another backend keeps no registry or records there).
 */
export function existingDataDir(loaded: LoadedConfig, options: CommonOptions, io: CliIo): void {
  const { dataDir, configPath } = loaded;
  if (loaded.config.store.backend === 'nats' || existsSync(dataDir)) return;
  const source = dataDirSource(options, io, configPath);
  const defaults =
    '$STATE_DIRECTORY (set by systemd), else /var/lib/threatcol for root, else ~/.local/state/threatcol';
  throw new ThreatcolError(
    'NO_DATA_DIR',
    `the data directory ${dataDir} does not exist (from ${source}; the defaults are ${defaults}). ` +
      'Check --data-dir, or run as the service user: sudo -u threatcol threatcol ...',
  );
}

/** The line change commands print so the admin sees where the change went (the service may read elsewhere). */
export function storeLocationLine(loaded: LoadedConfig): string {
  return loaded.config.store.backend === 'nats'
    ? `Store: NATS JetStream at ${loaded.config.nats.servers.join(', ')}`
    : `Data directory: ${loaded.dataDir}`;
}
