// Black box: a syslog sensor identified by its CA and name (`--client-ca FILE --client-cn NAME`) over real TLS:
// `send syslog` with a CA-signed certificate is stored; a wrong name, another CA, a self-signed certificate
// and no certificate are refused, and a sensor that pins a certificate is never taken by address alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { connect } from 'node:tls';
import { runCli, spawnServe } from '../helpers/cli.js';
import { parseExposition } from '../helpers/prometheus.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeTestCa } from '../helpers/test-ca.js';
import { until } from '../helpers/until.js';

const CEF = (n: number) =>
  `<134>1 2026-11-26T12:00:00Z ngfw - - - - CEF:0|Check Point|VPN-1|R81|${n}|Attack ${n}|8|src=10.0.0.${n} dst=192.0.2.1 dpt=443 proto=TCP`;

/** One TLS connection presenting `client` (or none) that sends `messages` octet-counted; resolves once closed. */
function sendTls(port: number, client: { certPath: string; keyPath: string } | null, messages: string[]) {
  return new Promise<void>((resolve) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port,
        rejectUnauthorized: false,
        ...(client ? { cert: readFileSync(client.certPath), key: readFileSync(client.keyPath) } : {}),
      },
      () => socket.end(messages.map((m) => `${Buffer.byteLength(m)} ${m}`).join('')),
    );
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.resume();
  });
}

test('sensor --client-ca --client-cn: a certificate of that CA naming the sender (CN or SAN DNS) is the sensor; a wrong name, another CA, self-signed or none is refused', async (t) => {
  const dir = makeTempDir(t);
  const ca = makeTestCa(dir, 'branch-ca');
  const other = makeTestCa(dir, 'other-ca');
  const byCn = ca.issue('fw-cn', 'fw.example.org');
  const bySan = ca.issue('fw-san', 'ignored', 'DNS:fw.example.org');
  const wrongName = ca.issue('intruder', 'intruder.example.org');
  const otherCa = other.issue('lookalike', 'fw.example.org');
  const selfSigned = { certPath: join(dir, 'self.pem'), keyPath: join(dir, 'self.key') };
  writeSelfSigned(selfSigned.certPath, selfSigned.keyPath, { cn: 'fw.example.org' });
  const pinned = { certPath: join(dir, 'pinned.pem'), keyPath: join(dir, 'pinned.key') };
  writeSelfSigned(pinned.certPath, pinned.keyPath, { cn: 'pinned' });

  const add = async (...args: string[]) => {
    const r = await runCli(['sensor', 'add', '--data-dir', dir, ...args]);
    assert.equal(r.code, 0, r.stderr);
  };
  await add('fw', '--syslog', '--format', 'cef', '--client-ca', ca.certPath, '--client-cn', 'fw.example.org');
  // Pins a certificate and lists the loopback network: an address alone must not stand in for the key.
  await add(
    'pinned',
    '--syslog',
    '--format',
    'cef',
    '--client-cert',
    pinned.certPath,
    '--from',
    '127.0.0.1/32',
  );
  const shown = await runCli(['sensor', 'show', 'fw', '--data-dir', dir]);
  assert.match(shown.stdout, /^Syslog: +cef, client certificates for "fw\.example\.org" from its CA$/m);

  const serve = await spawnServe(dir, [], { env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0' } });
  t.after(() => serve.stop());
  const { tlsPort } = serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number };

  // The real CLI presents the CA-signed certificate (CN) and trusts the collector from the data directory.
  const sent = await runCli([
    'send',
    'syslog',
    '--format',
    'cef',
    '--sample',
    '--count',
    '5',
    '--url',
    `127.0.0.1:${tlsPort}`,
    '--client-cert',
    byCn.certPath,
    '--client-key',
    byCn.keyPath,
    '--data-dir',
    dir,
  ]);
  assert.equal(sent.code, 0, sent.stderr);
  await sendTls(tlsPort, bySan, [CEF(1)]);
  await sendTls(tlsPort, pinned, [CEF(2)]);
  const stored = await storedSyslog(dir, 7);
  assert.deepEqual(stored.map((r) => r.sensor).sort(), ['fw', 'fw', 'fw', 'fw', 'fw', 'fw', 'pinned']);
  assert.ok(
    stored.some((r) => r.threat === 'Attack 1' && r.sensor === 'fw'),
    'the SAN DNS name counts',
  );

  for (const client of [wrongName, otherCa, selfSigned, null]) await sendTls(tlsPort, client, [CEF(9)]);
  const refused = async () => {
    const families = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
    return families
      .get('threatcol_syslog_connections_refused_total')
      ?.samples.find((s) => s.labels.reason === 'no_sensor')?.value;
  };
  await until(async () => (await refused()) === 4, 10_000, 'four connections refused');
  assert.equal((await storedSyslog(dir, 7)).length, 7, 'nothing of the refused connections stored');

  // Revoking the CA-identified sensor closes its open connection.
  const open = connect({
    host: '127.0.0.1',
    port: tlsPort,
    rejectUnauthorized: false,
    cert: readFileSync(byCn.certPath),
    key: readFileSync(byCn.keyPath),
  });
  open.on('error', () => {});
  const closed = new Promise<void>((resolve) => open.on('close', () => resolve()));
  const message = CEF(3);
  open.write(`${Buffer.byteLength(message)} ${message}`);
  await storedSyslog(dir, 8);
  const revoked = await runCli(['sensor', 'revoke', 'fw', '--data-dir', dir]);
  assert.equal(revoked.code, 0, revoked.stderr);
  await closed; // the test's timeout bounds it: the registry watch sees the change within a second
});

test('sensor add --client-ca: needs --client-cn, and a CA certificate', async (t) => {
  const dir = makeTempDir(t);
  const ca = makeTestCa(dir, 'ca');
  const leaf = ca.issue('leaf', 'fw.example.org');
  for (const args of [
    ['--client-ca', ca.certPath],
    ['--client-cn', 'fw.example.org'],
    ['--client-ca', leaf.certPath, '--client-cn', 'fw.example.org'],
    ['--client-ca', join(dir, 'missing.pem'), '--client-cn', 'fw.example.org'],
  ]) {
    const r = await runCli(['sensor', 'add', 'x', '--data-dir', dir, '--syslog', '--format', 'cef', ...args]);
    assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
  }
  const r = await runCli(['sensor', 'add', 'x', '--data-dir', dir, '--client-ca', ca.certPath]);
  assert.equal(r.code, 64, 'without --syslog');
});
