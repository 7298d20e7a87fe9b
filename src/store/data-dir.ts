// Creates the data directory (mode 0700) and tells who owns it.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ThreatcolError } from '../errors.js';
import { type Owner, ownerOf } from './file-owner.js';

/** Ensures the directory exists; returns its owner, which files created in it must keep. */
export function ensureDataDir(dataDir: string): Owner {
  try {
    // Parents get the default mode: made 0700 by root, they would lock the service user out of its directory.
    mkdirSync(dirname(dataDir), { recursive: true });
    try {
      mkdirSync(dataDir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return ownerOf(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new ThreatcolError('CONFIG_INVALID', `cannot use the data directory ${dataDir}: ${code}`, {
      cause: error,
    });
  }
}
