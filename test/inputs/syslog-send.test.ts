// Black box: `threatcol send syslog --sample` against the real daemon, over TLS with the sensor's pinned client
// certificate and over plain TCP; every message sent is stored once under its sensor and format.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import test from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { type SyslogErrorsReport, syslogErrors } from '../helpers/syslog-errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('send syslog: 60 panos messages over TLS on 4 connections with a client certificate, 15 cef over plain TCP, each stored once', async (t) => {
  const dir = makeTempDir(t);
  const certPath = join(dir, 'client.pem');
  const keyPath = join(dir, 'client.key');
  writeSelfSigned(certPath, keyPath, { cn: 'pa' });
  for (const args of [
    ['pa', '--format', 'panos', '--client-cert', certPath],
    ['cp', '--format', 'cef', '--from', '127.0.0.1/32'],
  ]) {
    const added = await runCli([
      'sensor',
      'add',
      ...args.slice(0, 1),
      '--data-dir',
      dir,
      '--syslog',
      ...args.slice(1),
    ]);
    assert.equal(added.code, 0, added.stderr);
  }
  const serve = await spawnServe(dir, [], {
    env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0', THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0' },
  });
  t.after(() => serve.stop());
  const at = serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number; tcpPort: number };

  // The collector's self-signed certificate is trusted from the data directory, as for send firewall.
  const tls = await runCli([
    'send',
    'syslog',
    '--format',
    'panos',
    '--sample',
    '--count',
    '60',
    '--concurrency',
    '4',
    '--url',
    `127.0.0.1:${at.tlsPort}`,
    '--client-cert',
    certPath,
    '--client-key',
    keyPath,
    '--data-dir',
    dir,
    '--json',
  ]);
  assert.equal(tls.code, 0, tls.stderr);
  const summary = JSON.parse(tls.stdout) as { messages: number; connections: number; to: string };
  assert.deepEqual(
    [summary.messages, summary.connections, summary.to],
    [60, 4, `tls://127.0.0.1:${at.tlsPort}`],
  );
  const tcp = await runCli([
    'send',
    'syslog',
    '--format',
    'cef',
    '--sample',
    '--count',
    '15',
    '--tcp',
    '--url',
    `127.0.0.1:${at.tcpPort}`,
  ]);
  assert.equal(tcp.code, 0, tcp.stderr);
  assert.match(
    tcp.stdout,
    /^sent 15 cef messages \(\d+ bytes\) to tcp:\/\/127\.0\.0\.1:\d+ over 1 connection/,
  );

  const records = await storedSyslog(dir, 75, '75 syslog records stored', 30_000);
  const by = (sensor: string) => records.filter((r) => r.sensor === sensor);
  assert.equal(by('pa').length, 60);
  assert.equal(by('cp').length, 15);
  assert.ok(by('pa').every((r) => r.format === 'panos' && r.endpoint === 'syslog'));
  assert.ok(by('cp').every((r) => r.format === 'cef'));
  assert.equal(new Set(records.map((r) => r.original)).size, 75, 'every message distinct, stored once');

  // Without the client certificate the connection is known by its address only: 127.0.0.1 is cp's, a CEF
  // sensor, so the PAN-OS message is unreadable there, counted and sampled, not stored as pa's.
  const anonymous = await runCli([
    'send',
    'syslog',
    '--format',
    'panos',
    '--sample',
    '--url',
    `127.0.0.1:${at.tlsPort}`,
    '--data-dir',
    dir,
  ]);
  assert.equal(anonymous.code, 0, anonymous.stderr); // syslog has no answer to refuse with
  let errors: SyslogErrorsReport = { sensor: 'cp', counts: [], samples: [] };
  await until(
    async () => {
      errors = await syslogErrors(serve, dir, 'cp');
      return errors.samples.length > 0;
    },
    10_000,
    'the PAN-OS message sampled as unreadable CEF',
  );
  assert.deepEqual([errors.counts[0]?.invalid, errors.samples[0]?.reason], [1, 'no CEF: header']);
  const usage = await runCli(['send', 'syslog', '--sample', '--url', '127.0.0.1:1']);
  assert.equal(usage.code, 64);
  assert.match(usage.stderr, /--format panos\|cef\|fortinet\|suricata/);
});
