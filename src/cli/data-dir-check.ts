// Read-only and change commands refuse a data directory that does not exist (a typo is not an empty system).
import { existsSync } from 'node:fs';
import { ThreatcolError } from '../errors.js';
import type { CommonOptions } from './common-options.js';
import type { CliIo } from './io.js';

/** Where the data directory came from, in the words of the precedence the README documents. */
export function dataDirSource(options: CommonOptions, io: CliIo, configPath: string | null): string {
  if (options.dataDir !== undefined) return '--data-dir';
  if (io.env.THREATCOL_DATA_DIR) return 'THREATCOL_DATA_DIR';
  if (configPath !== null) return `dataDir in ${configPath}, or the default`;
  return 'the default';
}

/** Throws NO_DATA_DIR when `dataDir` does not exist, naming it and the defaults that were tried. */
export function existingDataDir(
  dataDir: string,
  options: CommonOptions,
  io: CliIo,
  configPath: string | null = null,
): void {
  if (existsSync(dataDir)) return;
  const source = dataDirSource(options, io, configPath);
  const defaults =
    '$STATE_DIRECTORY (set by systemd), else /var/lib/threatcol for root, else ~/.local/state/threatcol';
  throw new ThreatcolError(
    'NO_DATA_DIR',
    `the data directory ${dataDir} does not exist (from ${source}; the defaults are ${defaults}). ` +
      'Check --data-dir, or run as the service user: sudo -u threatcol threatcol ...',
  );
}
