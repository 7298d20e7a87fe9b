// Creates the data directory (mode 0700) and tells who owns it.
import { mkdirSync } from 'node:fs';
import { ThreatcolError } from '../errors.js';
import { type Owner, ownerOf } from './file-owner.js';

/** Ensures the directory exists; returns its owner, which files created in it must keep. */
export function ensureDataDir(dataDir: string): Owner {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return ownerOf(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new ThreatcolError('CONFIG_INVALID', `cannot use the data directory ${dataDir}: ${code}`, {
      cause: error,
    });
  }
}
