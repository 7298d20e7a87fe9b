// Black box: `send syslog` against the real daemon tells a refused connection from a taken one. A connection no
// sensor matches is closed unread by the collector: the command fails with SYSLOG_REFUSED instead of reporting
// messages sent. `--sensor NAME` tests one sensor (its format, its identity checked before sending), `--source`
// sends from a local address a sensor's network names; a listener on [::] takes IPv4 and IPv6 senders.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';
import { renderConffile } from '../../src/config/describe-config.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

async function addSyslogSensor(dir: string, name: string, args: string[]): Promise<void> {
  const r = await runCli(['sensor', 'add', name, '--data-dir', dir, '--syslog', ...args]);
  assert.equal(r.code, 0, r.stderr);
}

test('send syslog: a refused connection fails with SYSLOG_REFUSED; --sensor and --source test one sensor', async (t) => {
  const dir = makeTempDir(t);
  const certPath = join(dir, 'pa.pem');
  const keyPath = join(dir, 'pa.key');
  writeSelfSigned(certPath, keyPath, { cn: 'pa' });
  await addSyslogSensor(dir, 'fw', ['--format', 'panos', '--from', '127.0.0.2/32']);
  await addSyslogSensor(dir, 'pa', ['--format', 'cef', '--client-cert', certPath]);
  const serve = await spawnServe(dir, [], {
    env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0', THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0' },
  });
  t.after(() => serve.stop());
  const at = serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number; tcpPort: number };
  const tls = ['--url', `127.0.0.1:${at.tlsPort}`, '--data-dir', dir];
  const send = (args: string[]) => runCli(['send', 'syslog', '--sample', ...args]);

  // From 127.0.0.1 without a certificate no sensor matches: the collector closes it unread.
  for (const args of [
    ['--format', 'panos', ...tls],
    ['--format', 'panos', '--tcp', '--url', `127.0.0.1:${at.tcpPort}`],
  ]) {
    const refused = await send(args);
    assert.equal(refused.code, 77, `${args.join(' ')}: ${refused.stdout}${refused.stderr}`);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      /^threatcol: SYSLOG_REFUSED: (tls|tcp):\/\/127\.0\.0\.1:\d+: the collector closed the connection without taking the messages \((closed|reset: \w+)\): no active sensor matches this connection \(from 127\.0\.0\.1, without a client certificate\)/m,
    );
  }

  // --sensor fw from here: found before sending, with the way to test it from this machine.
  const notFw = await send(['--sensor', 'fw', ...tls]);
  assert.equal(notFw.code, 77, notFw.stderr);
  assert.match(
    notFw.stderr,
    /SYSLOG_REFUSED: a connection from 127\.0\.0\.1 without a client certificate matches no sensor: the collector would close it unread \(sensor fw: from 127\.0\.0\.2\/32\); to test fw from here, send from a local address in 127\.0\.0\.2\/32 with --source ADDRESS/,
  );
  // --source: the firewall's address, local here; the sensor's format by default.
  const fw = await send(['--sensor', 'fw', '--source', '127.0.0.2', ...tls]);
  assert.equal(fw.code, 0, fw.stderr);
  assert.match(
    fw.stdout,
    /^sent 1 panos messages \(\d+ bytes\) to tls:\/\/127\.0\.0\.1:\d+ as sensor fw over 1 connection/,
  );

  // A pinned sensor needs its certificate; with it the test passes as that sensor.
  const noCert = await send(['--sensor', 'pa', ...tls]);
  assert.equal(noCert.code, 64, noCert.stderr);
  assert.match(
    noCert.stderr,
    /sensor "pa" is known by its client certificate: give --client-cert FILE --client-key FILE/,
  );
  const pa = await send(['--sensor', 'pa', '--client-cert', certPath, '--client-key', keyPath, ...tls]);
  assert.equal(pa.code, 0, pa.stderr);
  assert.match(pa.stdout, /^sent 1 cef messages .* as sensor pa /);

  // A broader sensor for all of loopback: fw's test from 127.0.0.1 would be taken as lo's, so nothing is sent.
  await addSyslogSensor(dir, 'lo', ['--format', 'cef', '--from', '127.0.0.0/8']);
  const other = await send(['--sensor', 'fw', ...tls]);
  assert.equal(other.code, 77, other.stderr);
  assert.match(
    other.stderr,
    /SYSLOG_OTHER_SENSOR: a connection from 127\.0\.0\.1 without a client certificate is taken as sensor "lo", not "fw"/,
  );

  const records = await storedSyslog(dir, 2, 'the two taken messages stored');
  await new Promise((r) => setTimeout(r, 300));
  const again = await storedSyslog(dir, 2);
  assert.deepEqual(
    again.map((r) => `${r.sensor}/${r.format}`).sort(),
    ['fw/panos', 'pa/cef'],
    `only the taken messages are stored: ${JSON.stringify(records.map((r) => r.sensor))}`,
  );
  const bad = await send(['--sensor', 'fw', '--source', 'firewall', ...tls]);
  assert.equal(bad.code, 64);
});

test('syslog.listen "[::]:PORT" takes senders over IPv4 and IPv6 (dual-stack, as the HTTPS port)', async (t) => {
  const dir = makeTempDir(t);
  await addSyslogSensor(dir, 'v4', ['--format', 'cef', '--from', '127.0.0.1/32']);
  await addSyslogSensor(dir, 'v6', ['--format', 'panos', '--from', '::1/128']);
  const serve = await spawnServe(dir, [], { env: { THREATCOL_SYSLOG_LISTEN: '[::]:0' } });
  t.after(() => serve.stop());
  const at = serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number };
  for (const [host, sensor] of [
    ['127.0.0.1', 'v4'],
    ['::1', 'v6'],
  ] as const) {
    const r = await runCli([
      'send',
      'syslog',
      '--sample',
      '--sensor',
      sensor,
      '--url',
      `[${host}]:${at.tlsPort}`,
      '--data-dir',
      dir,
    ]);
    assert.equal(r.code, 0, `${host}: ${r.stderr}`);
  }
  const records = await storedSyslog(dir, 2, 'one message from each family stored');
  assert.deepEqual(records.map((r) => `${r.sensor} ${r.remote_addr}`).sort(), ['v4 127.0.0.1', 'v6 ::1']);
  // The configuration file the package installs gives this form as its example.
  assert.match(
    renderConffile(),
    /syslog over TLS \(RFC 5425\) as host:port, e\.g\. \[::\]:6514 \(IPv4 and IPv6;/,
  );
});
