// Refuses to serve from a data directory other local users could write: whoever can plant sensors.json or a
// certificate there can let any sender in or impersonate the collector (security finding 6).
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { ThreatcolError } from '../errors.js';
import { REGISTRY_FILE } from './data-layout.js';

/** What `serve` checks: the directory itself, the registry and the TLS directory (when they exist). */
const GUARDED = ['', REGISTRY_FILE, 'tls'];

/**
 * Throws CONFIG_INVALID (exit 78) naming the path and the command that fixes it when the data directory,
 * sensors.json or tls/ is writable by group or others, or owned by a user that is neither root, the user
 * running serve, nor the data directory's owner (the service user, when root runs serve).
 */
export function assertDataDirSafe(dataDir: string, uid = process.getuid?.() ?? 0): void {
  const dirOwner = lstatSync(dataDir).uid;
  const trusted = new Set([0, uid, dirOwner]);
  for (const name of GUARDED) {
    const path = name === '' ? dataDir : join(dataDir, name);
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path);
    } catch {
      continue; // not created yet: serve creates it with safe modes
    }
    if (st.mode & 0o022) {
      const who = st.mode & 0o002 ? 'everyone' : 'its group';
      throw new ThreatcolError(
        'CONFIG_INVALID',
        `${path} is writable by ${who} (mode 0${(st.mode & 0o777).toString(8)}): another local user could plant ` +
          `sensors or a certificate. Fix: chmod go-w ${path}`,
      );
    }
    if (name === '' ? dirOwner !== uid && dirOwner !== 0 && uid !== 0 : !trusted.has(st.uid)) {
      throw new ThreatcolError(
        'CONFIG_INVALID',
        `${path} belongs to uid ${st.uid}, neither root, the user running threatcol (uid ${uid}) nor the data ` +
          `directory's owner. Fix: chown ${name === '' ? uid : dirOwner} ${path} (as root)`,
      );
    }
  }
}
