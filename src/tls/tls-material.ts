// TLS material and policy: the configured certificate, or a self-signed one generated on first start.
import { webcrypto } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import type { Config } from '../config/schema.js';
import { adoptOwner, type Owner, writeFileAtomic } from '../data-dir/file-owner.js';
import { readTlsPair, selfSignedPaths, type TlsMaterial } from './certificate.js';

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
  // Loaded only on first start: the X.509 builder needs a Reflect polyfill that the daemon otherwise never uses.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  x509.cryptoProvider.set(webcrypto as never);
  const algorithm =
    keyType === 'rsa'
      ? {
          name: 'RSASSA-PKCS1-v1_5',
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: 'SHA-256',
        }
      : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  // As @peculiar/x509 types it: its KeyUsage lacks the ML-KEM usages that Node's own types list.
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as Parameters<
    typeof x509.X509CertificateGenerator.createSelfSigned
  >[0]['keys'];
  const host = hostname();
  const notBefore = new Date(Date.now() - 60_000);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: `CN=${host.replace(/[,+="<>#;\\]/g, '')}`,
    notBefore,
    notAfter: new Date(notBefore.getTime() + 5 * 365 * 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        // RFC 5480: an ECDSA key signs only; keyEncipherment belongs to RSA key transport.
        x509.KeyUsageFlags.digitalSignature | (keyType === 'rsa' ? x509.KeyUsageFlags.keyEncipherment : 0),
        true,
      ),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: host },
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join('\n')}\n-----END PRIVATE KEY-----\n`;
  const dir = join(paths.certPath, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  adoptOwner(dir, owner);
  writeFileAtomic(paths.keyPath, keyPem, 0o600, owner);
  writeFileAtomic(paths.certPath, cert.toString('pem'), 0o644, owner);
}
