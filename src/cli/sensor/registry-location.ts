// Warns a non-root admin who is about to create a registry of their own while the service has one elsewhere.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { REGISTRY_FILE } from '../../data-dir/data-layout.js';

/** The service's data directory when run by the shipped unit (systemd's StateDirectory). */
export const SERVICE_DATA_DIR = '/var/lib/threatcol';

/** True when `path` exists or exists behind a directory this user may not enter (EACCES). */
function presentOrHidden(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EACCES';
  }
}

/**
 * The warning `sensor add` prints (or null) when a non-root user creates a new registry in `dataDir` while the
 * service's registry exists: the service would never see the sensor, and the firewall would get 401.
 */
export function foreignRegistryWarning(
  dataDir: string,
  uid: number,
  serviceDataDir = SERVICE_DATA_DIR,
): string | null {
  if (uid === 0 || dataDir === serviceDataDir) return null;
  if (presentOrHidden(join(dataDir, REGISTRY_FILE))) return null;
  if (!presentOrHidden(join(serviceDataDir, REGISTRY_FILE))) return null;
  return (
    `threatcol: warning: creating a new sensor registry in ${dataDir}, but the service's registry is ` +
    `${serviceDataDir}/${REGISTRY_FILE}: the service will not know this sensor and will answer 401. ` +
    'To add it to the service: sudo -u threatcol threatcol sensor add NAME (or sudo threatcol ...)'
  );
}
