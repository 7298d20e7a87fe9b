// The CAs a connection trusts by default: Node's bundled roots plus the distribution's bundle, which holds the
// CAs an administrator added (update-ca-certificates). Read once, on first use.
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

/** Where Linux distributions keep the system CA bundle (Debian/Ubuntu/Alpine, Fedora/RHEL, openSUSE). */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
];

let systemCache: string[] | null = null;

export function systemCas(): string[] {
  if (systemCache) return systemCache;
  const cas: string[] = [...rootCertificates];
  for (const path of SYSTEM_BUNDLES) {
    try {
      cas.push(readFileSync(path, 'utf8'));
      break;
    } catch {
      // Not this distribution's path.
    }
  }
  systemCache = cas;
  return cas;
}
