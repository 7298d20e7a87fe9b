// Black box: `--client-ca` bundles that share a root. Sensor site-a trusts intermediate IA (with root R) for
// fw-a, site-b intermediate IB (with R) for fw-b: over a real TLS syslog listener, a certificate IB issued for
// fw-a is nobody's, and names match folding ASCII case only (a CN with U+212A KELVIN SIGN is not "fw-k").
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { connect } from 'node:tls';
import { runCli, spawnServe } from '../helpers/cli.js';
import { parseExposition } from '../helpers/prometheus.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { readStoredSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const CEF = (threat: string) =>
  `<134>1 2026-11-26T12:00:00Z ngfw - - - - CEF:0|Check Point|VPN-1|R81|1|${threat}|8|src=10.0.0.1 dst=192.0.2.1 dpt=443 proto=TCP`;

interface Issued {
  certPath: string;
  keyPath: string;
}

/** A certificate signed by `issuer` for `cn` (UTF-8), a CA (an intermediate) or a client certificate. */
function issue(dir: string, name: string, cn: string, issuer: Issued, ca: boolean): Issued {
  const out = { certPath: join(dir, `${name}.pem`), keyPath: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl([
    ...['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-utf8'],
    ...['-subj', `/CN=${cn}`, '-keyout', out.keyPath, '-out', csr],
  ]);
  writeFileSync(
    ext,
    ca
      ? 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n'
      : 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n',
  );
  openssl([
    ...['x509', '-req', '-in', csr, '-CA', issuer.certPath, '-CAkey', issuer.keyPath, '-CAcreateserial'],
    ...['-days', '2', '-extfile', ext, '-out', out.certPath],
  ]);
  return out;
}

/** One TLS connection presenting `leaf` and its intermediate that sends one message; resolves once closed. */
function sendTls(port: number, leaf: Issued, intermediate: Issued, threat: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port,
        rejectUnauthorized: false,
        cert: readFileSync(leaf.certPath, 'utf8') + readFileSync(intermediate.certPath, 'utf8'),
        key: readFileSync(leaf.keyPath),
      },
      () => socket.end(`${Buffer.byteLength(CEF(threat))} ${CEF(threat)}`),
    );
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.resume();
  });
}

test('sensor --client-ca: bundles under one root take only certificates of their own intermediate; names fold ASCII case only', async (t) => {
  const dir = makeTempDir(t);
  const root = { certPath: join(dir, 'root.pem'), keyPath: join(dir, 'root.key') };
  writeSelfSigned(root.certPath, root.keyPath, { cn: 'shared root' });
  const ia = issue(dir, 'ia', 'intermediate A', root, true);
  const ib = issue(dir, 'ib', 'intermediate B', root, true);
  const bundle = (name: string, intermediate: Issued) => {
    const path = join(dir, `${name}-bundle.pem`);
    writeFileSync(path, readFileSync(intermediate.certPath, 'utf8') + readFileSync(root.certPath, 'utf8'));
    return path;
  };
  const bundleA = bundle('a', ia);
  const bundleB = bundle('b', ib);
  const add = async (name: string, caFile: string, cn: string) => {
    const r = await runCli([
      ...['sensor', 'add', name, '--data-dir', dir, '--syslog', '--format', 'cef'],
      ...['--client-ca', caFile, '--client-cn', cn],
    ]);
    assert.equal(r.code, 0, r.stderr);
  };
  await add('site-a', bundleA, 'fw-a');
  await add('site-b', bundleB, 'fw-b');
  await add('site-k', bundleA, 'fw-k');

  const serve = await spawnServe(dir, [], { env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0' } });
  t.after(() => serve.stop());
  const { tlsPort } = serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number };

  await sendTls(tlsPort, issue(dir, 'a-leaf', 'fw-a', ia, false), ia, 'from site-a');
  await sendTls(tlsPort, issue(dir, 'b-leaf', 'fw-b', ib, false), ib, 'from site-b');
  await sendTls(tlsPort, issue(dir, 'k-upper', 'FW-K', ia, false), ia, 'from site-k in capitals');
  // IB issued it for site-a's name: chains to R, which site-a's bundle holds, but not through IA.
  await sendTls(tlsPort, issue(dir, 'cross', 'fw-a', ib, false), ib, 'cross-issued');
  await sendTls(tlsPort, issue(dir, 'kelvin', 'fw-\u212a', ia, false), ia, 'kelvin sign');

  const refused = async () =>
    parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text())
      .get('threatcol_syslog_connections_refused_total')
      ?.samples.find((s) => s.labels.reason === 'no_sensor')?.value ?? 0;
  // Every connection accounted for: stored or refused.
  await until(
    async () => (await readStoredSyslog(dir)).length + (await refused()) >= 5,
    20_000,
    'five connections stored or refused',
    100,
  );
  const stored = (await readStoredSyslog(dir)).map((r) => `${r.sensor}: ${r.threat}`).sort();
  assert.deepEqual(stored, ['site-a: from site-a', 'site-b: from site-b', 'site-k: from site-k in capitals']);
  assert.equal(await refused(), 2);
});
