// Creates the data directory (mode 0700) and tells who owns it.
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isPermissionError, permissionDenied, ThreatcolError } from '../errors.js';
import { type Owner, ownerOf } from './file-owner.js';

/** The system user the shipped systemd units run as. */
export const SERVICE_USER = 'threatcol';

export interface EnsureDataDirOptions {
  /** Who should own a directory that root creates fresh; default: the `threatcol` user, if it exists. */
  serviceOwner?: () => Owner | null;
}

/**
 * Ensures the directory exists; returns its owner, which files created in it must keep. When root creates it
 * (e.g. `sudo threatcol sensor add` before the first start), it goes to the service user at once.
 */
export function ensureDataDir(dataDir: string, options: EnsureDataDirOptions = {}): Owner {
  try {
    // Parents get the default mode: made 0700 by root, they would lock the service user out of its directory.
    mkdirSync(dirname(dataDir), { recursive: true });
    let created = true;
    try {
      mkdirSync(dataDir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      created = false;
    }
    if (created && process.getuid?.() === 0) {
      const owner = (options.serviceOwner ?? (() => lookupUser(SERVICE_USER)))();
      if (owner) chownSync(dataDir, owner.uid, owner.gid);
    }
    return ownerOf(dataDir);
  } catch (error) {
    if (isPermissionError(error)) throw permissionDenied(error, dataDir, 'create or use the data directory');
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new ThreatcolError('CONFIG_INVALID', `cannot use the data directory ${dataDir}: ${code}`, {
      cause: error,
    });
  }
}

/** uid and gid of a user from /etc/passwd, or null. */
export function lookupUser(name: string, passwdPath = '/etc/passwd'): Owner | null {
  let text: string;
  try {
    text = readFileSync(passwdPath, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields.length >= 4) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  return null;
}
