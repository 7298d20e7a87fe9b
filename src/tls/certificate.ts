// The TLS certificate as both the daemon and `check` see it: reading and matching a pair, where the self-signed
// one lives, and how close it is to expiry. Neutral ground, so `check` does not import the server.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ThreatcolError } from '../errors.js';

export const DAY_MS = 86_400_000;
/** A certificate this close to its end is warned about. */
export const EXPIRY_WARNING_DAYS = 14;

export interface TlsMaterial {
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
  selfSigned: boolean;
  /** SHA-256 fingerprint of the certificate, colon-separated hex (as openssl prints it). */
  fingerprint: string;
  notAfter: Date;
}

export function selfSignedPaths(dataDir: string): { certPath: string; keyPath: string } {
  return { certPath: join(dataDir, 'tls', 'cert.pem'), keyPath: join(dataDir, 'tls', 'key.pem') };
}

export function readTlsPair(certPath: string, keyPath: string, selfSigned: boolean): TlsMaterial {
  let cert: string;
  let key: string;
  try {
    cert = readFileSync(certPath, 'utf8');
    key = readFileSync(keyPath, 'utf8');
  } catch (error) {
    throw new ThreatcolError('TLS_INVALID', `cannot read TLS material: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key)))
      throw new Error('the key does not match the certificate');
  } catch (error) {
    throw new ThreatcolError('TLS_INVALID', `${certPath} / ${keyPath}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    cert,
    key,
    certPath,
    keyPath,
    selfSigned,
    fingerprint: x509.fingerprint256,
    notAfter: new Date(x509.validTo),
  };
}

/** Days left until `notAfter` when that is within the warning window (negative when already expired). */
export function daysUntilExpiry(notAfter: Date, now: number): number | null {
  const left = (notAfter.getTime() - now) / DAY_MS;
  return left <= EXPIRY_WARNING_DAYS ? Math.floor(left * 10) / 10 : null;
}
