// TLS material and policy: the configured certificate, or a self-signed one generated on first start.
import { existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import type { Config } from '../config/schema.js';
import { adoptOwner, type Owner, writeFileAtomic } from '../data-dir/file-owner.js';
import { readTlsPair, selfSignedPaths, type TlsMaterial } from './certificate.js';
import { createSelfSigned } from './self-signed-certificate.js';

export { readTlsPair, selfSignedPaths, type TlsMaterial };

/** TLS 1.2 suites: ECDHE only (forward secrecy), AEAD only (no CBC, no static RSA). TLS 1.3 suites are all AEAD. */
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
];
export const TLS13_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
];

export function tlsPolicy(config: Config['tls']): SecureContextOptions {
  return {
    minVersion: config.minVersion,
    maxVersion: config.maxVersion,
    ciphers: [...TLS13_CIPHERS, ...TLS12_CIPHERS].join(':'),
    honorCipherOrder: true,
    ecdhCurve: 'X25519:prime256v1:secp384r1',
  };
}

/** Reads the configured pair, or the self-signed pair (creating it on first start); checks that they match. */
export async function loadTlsMaterial(
  config: Config['tls'],
  dataDir: string,
  owner: Owner | null,
): Promise<TlsMaterial & { generated: boolean }> {
  let generated = false;
  let paths: { certPath: string; keyPath: string };
  if (config.cert !== null && config.key !== null) {
    paths = { certPath: config.cert, keyPath: config.key };
  } else {
    paths = selfSignedPaths(dataDir);
    if (!existsSync(paths.certPath) || !existsSync(paths.keyPath)) {
      await generateSelfSigned(paths, config.selfSignedKeyType, owner);
      generated = true;
    }
  }
  return { ...readTlsPair(paths.certPath, paths.keyPath, config.cert === null), generated };
}

async function generateSelfSigned(
  paths: { certPath: string; keyPath: string },
  keyType: 'ecdsa' | 'rsa',
  owner: Owner | null,
): Promise<void> {
  const host = hostname();
  const notBefore = new Date(Date.now() - 60_000);
  const { certPem, keyPem } = createSelfSigned(
    keyType,
    host,
    notBefore,
    new Date(notBefore.getTime() + 5 * 365 * 86_400_000),
  );
  const dir = join(paths.certPath, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  adoptOwner(dir, owner);
  writeFileAtomic(paths.keyPath, keyPem, 0o600, owner);
  writeFileAtomic(paths.certPath, certPem, 0o644, owner);
}
