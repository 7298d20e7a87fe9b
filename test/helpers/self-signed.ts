// A throwaway self-signed ECDSA P-256 certificate and key made by openssl, for tests that need a TLS peer of
// their own (a hostile server, a syslog client, a CA that is not the collector's).
import { execFileSync } from 'node:child_process';

export interface SelfSignedOptions {
  /** Subject common name. */
  cn: string;
  /** Extra `subjectAltName`, e.g. `IP:127.0.0.1`. */
  altName?: string;
  days?: number;
}

/** Writes the certificate to `certPath` and its key to `keyPath`. */
export function writeSelfSigned(certPath: string, keyPath: string, options: SelfSignedOptions): void {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      String(options.days ?? 2),
      '-subj',
      `/CN=${options.cn}`,
      ...(options.altName ? ['-addext', `subjectAltName=${options.altName}`] : []),
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
}
