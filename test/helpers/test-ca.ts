// A throwaway CA made by openssl and client certificates it signs, for the tests of `sensor --client-ca`.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSelfSigned } from './self-signed.js';

export interface TestCa {
  certPath: string;
  keyPath: string;
  /** A client certificate this CA signs for `cn` (and `altName`, e.g. `DNS:fw.example.org`); its paths. */
  issue(name: string, cn: string, altName?: string): { certPath: string; keyPath: string };
}

/** A CA (basicConstraints CA:TRUE, as `openssl req -x509` makes it) named `name` in `dir`. */
export function makeTestCa(dir: string, name: string): TestCa {
  const certPath = join(dir, `${name}.pem`);
  const keyPath = join(dir, `${name}.key`);
  writeSelfSigned(certPath, keyPath, { cn: `${name} test CA` });
  return {
    certPath,
    keyPath,
    issue(client, cn, altName) {
      const out = { certPath: join(dir, `${client}.pem`), keyPath: join(dir, `${client}.key`) };
      const csr = join(dir, `${client}.csr`);
      const ext = join(dir, `${client}.ext`);
      const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
      openssl([
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-subj',
        `/CN=${cn}`,
        '-keyout',
        out.keyPath,
        '-out',
        csr,
      ]);
      writeFileSync(
        ext,
        `basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n${altName ? `subjectAltName=${altName}\n` : ''}`,
      );
      openssl([
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        certPath,
        '-CAkey',
        keyPath,
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        ext,
        '-out',
        out.certPath,
      ]);
      return out;
    },
  };
}
