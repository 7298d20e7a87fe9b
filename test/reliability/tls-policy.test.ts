// Reliability 7: the TLS policy as openssl s_client sees it: no TLS 1.0/1.1, no CBC or static RSA on TLS 1.2,
// and the accepted TLS 1.2 suites (ECDSA and RSA certificates together) are exactly the documented allowlist.
import { strict as assert } from 'node:assert';
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createServer } from 'node:tls';
import { TLS12_CIPHERS } from '../../src/tls/tls-material.js';
import { spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { stopAfter } from './support.js';

interface Handshake {
  protocol: string | null;
  cipher: string | null;
}

/** One s_client handshake; the client offers exactly what the arguments say (security level 0, so it offers old stuff). */
function handshake(port: number, args: string[]): Promise<Handshake> {
  return new Promise((resolve) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...args],
      { timeout: 10_000, encoding: 'utf8' },
      (_error, stdout) => {
        // "New, <cipher's version>, Cipher is X" names the suite; "Protocol  : X" the negotiated version.
        // (TLS 1.3 prints no session block before stdin closes; its "New," line is the real version.)
        const m = /New, (\S+), Cipher is (\S+)/.exec(stdout);
        const cipher = m?.[2];
        const protocol =
          /^\s*Protocol\s*:\s*(\S+)/m.exec(stdout)?.[1] ?? (m?.[1] === 'TLSv1.3' ? 'TLSv1.3' : undefined);
        resolve(
          cipher && cipher !== '(NONE)' && protocol ? { protocol, cipher } : { protocol: null, cipher: null },
        );
      },
    );
    child.stdin?.end();
  });
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

const candidates = execFileSync('openssl', ['ciphers', '-s', '-tls1_2', 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'], {
  encoding: 'utf8',
})
  .trim()
  .split(':')
  .filter((c) => c !== '' && !c.startsWith('TLS_')); // TLS 1.3 suites are not negotiable on 1.2

test('TLS policy: 1.0/1.1 refused; CBC and static RSA refused on 1.2; accepted 1.2 suites == TLS12_CIPHERS', async (t) => {
  // Control: this openssl can speak TLS 1.0 and 1.1 at all (else "refused" below would prove nothing).
  const dir = makeTempDir(t);
  const controlCert = join(dir, 'control');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-days',
      '1',
      '-keyout',
      `${controlCert}.key`,
      '-out',
      `${controlCert}.pem`,
    ],
    { stdio: 'ignore' },
  );
  const control = createServer({
    cert: readFileSync(`${controlCert}.pem`),
    key: readFileSync(`${controlCert}.key`),
    minVersion: 'TLSv1',
    ciphers: 'DEFAULT:@SECLEVEL=0',
  });
  control.on('secureConnection', (s) => s.end());
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
  t.after(() => control.close());
  const controlPort = (control.address() as { port: number }).port;
  const legacy = ['-cipher', 'DEFAULT:@SECLEVEL=0'];
  const controlTls10 = await handshake(controlPort, ['-tls1', ...legacy]);
  const controlTls11 = await handshake(controlPort, ['-tls1_1', ...legacy]);

  const ecdsaDir = makeTempDir(t);
  const rsaDir = makeTempDir(t);
  const ecdsa = await spawnServe(ecdsaDir);
  stopAfter(t, ecdsa);
  const rsa = await spawnServe(rsaDir, [], { env: { THREATCOL_TLS_SELF_SIGNED_KEY_TYPE: 'rsa' } });
  stopAfter(t, rsa);

  for (const server of [ecdsa, rsa]) {
    if (controlTls10.protocol === 'TLSv1') {
      assert.equal((await handshake(server.port, ['-tls1', ...legacy])).protocol, null, 'TLS 1.0 refused');
    }
    if (controlTls11.protocol === 'TLSv1.1') {
      assert.equal((await handshake(server.port, ['-tls1_1', ...legacy])).protocol, null, 'TLS 1.1 refused');
    }
    const modern = await handshake(server.port, []);
    assert.equal(modern.protocol, 'TLSv1.3', 'a default client gets TLS 1.3');
  }
  if (controlTls10.protocol !== 'TLSv1' || controlTls11.protocol !== 'TLSv1.1') {
    t.diagnostic(
      `this openssl cannot speak TLS 1.0/1.1 even to a permissive server; those checks were skipped`,
    );
  }

  const accepted = new Set<string>();
  for (const server of [ecdsa, rsa]) {
    const results = await mapLimit(candidates, 3, (cipher) =>
      handshake(server.port, ['-tls1_2', '-cipher', `${cipher}:@SECLEVEL=0`]),
    );
    results.forEach((r, i) => {
      if (r.protocol === null) return;
      assert.equal(r.protocol, 'TLSv1.2');
      assert.equal(r.cipher, candidates[i]);
      accepted.add(r.cipher as string);
    });
  }
  for (const cbcOrStatic of [
    'AES128-SHA',
    'AES256-GCM-SHA384',
    'ECDHE-RSA-AES128-SHA',
    'ECDHE-ECDSA-AES256-SHA384',
  ]) {
    assert.ok(candidates.includes(cbcOrStatic), `openssl offers ${cbcOrStatic}`);
    assert.ok(!accepted.has(cbcOrStatic), `${cbcOrStatic} refused`);
  }
  t.diagnostic(
    `TLS 1.2 candidates tried=${candidates.length} accepted=${[...accepted].sort().join(',')}; ` +
      `control TLS1.0=${controlTls10.protocol} TLS1.1=${controlTls11.protocol}`,
  );
  assert.deepEqual([...accepted].sort(), [...TLS12_CIPHERS].sort());
});
