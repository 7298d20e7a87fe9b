// Black box: a sender's unreadable syslog messages are counted per sensor and format and sampled for the
// operator (`sensor show --syslog-errors`, `GET /api/syslog-errors`), and /metrics carries the syslog series.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import test from 'node:test';
import { runCli, spawnServe } from '../helpers/cli.js';
import { parseExposition } from '../helpers/prometheus.js';
import type { SyslogErrorsReport } from '../helpers/syslog-errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const threat =
  '<134>Nov 26 12:00:07 sophos CEF:0|Sophos|XG|19.0|2|Virus detected|Medium|src=10.1.1.7 dst=198.51.100.4 dpt=80 proto=TCP cat=threat';
const traffic =
  '<134>Nov 26 12:00:08 fgt CEF:0|Fortinet|Fortigate|v7.2.5|00013|traffic:forward accept|3|cat=traffic:forward src=10.1.1.5 dst=203.0.113.9 spt=51000 dpt=443 proto=6';
/** A CEF threat whose source is no address: invalid, never half a record. */
const badAddress = (i: number) =>
  `<134>Nov 26 12:00:09 sophos CEF:0|Sophos|XG|19.0|2|Virus ${i}|Medium|src=not-an-ip dst=198.51.100.4 dpt=80 proto=TCP`;
/** A sender set to the wrong format (FortiGate key=value to a CEF sensor), 3000 bytes long. */
const wrongFormat = `<189>date=2026-11-26 time=12:00:10 devname="FG100F" type="utm" subtype="ips" msg="${'x'.repeat(2900)}"`;

/** Sends octet-counted frames over plain TCP and waits until the collector has closed its side. */
function sendFrames(port: number, messages: string[]): Promise<void> {
  const bytes = messages.map((m) => `${Buffer.byteLength(m)} ${m}`).join('');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.resume();
  });
}

test('other and invalid messages are counted per sensor and format; the latest 20 unreadable ones are shown, each cut to 1 KiB', async (t) => {
  const dataDir = makeTempDir(t);
  const add = await runCli([
    'sensor',
    'add',
    'sophos',
    '--data-dir',
    dataDir,
    '--syslog',
    '--format',
    'cef',
    '--from',
    '127.0.0.1/32',
  ]);
  assert.equal(add.code, 0, add.stderr);
  const serve = await spawnServe(dataDir, [], {
    env: { THREATCOL_SYSLOG_TCP_LISTEN: '127.0.0.1:0', THREATCOL_SYSLOG_MAX_MESSAGE_BYTES: '2048' },
  });
  t.after(() => serve.stop());
  const tcp = serve.logs.find((l) => l.msg === 'syslog listening')?.tcpPort as number;
  const admin = (serve.adminUrl as string).replace('http://', '');

  // 25 bad addresses then the wrong format: only the latest 20 of 26 stay.
  const bad = Array.from({ length: 25 }, (_, i) => badAddress(i));
  await sendFrames(tcp, [threat, traffic, ...bad, wrongFormat, threat]);
  // Two messages cut off: an octet-counted frame the sender ends inside of, and a line whose connection is
  // reset before its LF. Both lost (never received whole), counted as such.
  await new Promise<void>((resolve, reject) => {
    const socket = connect(tcp, '127.0.0.1', () => socket.end(`400 ${threat}`));
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.resume();
  });
  await new Promise<void>((resolve) => {
    const socket = connect(tcp, '127.0.0.1', () => {
      socket.write(threat);
      setTimeout(() => socket.resetAndDestroy(), 300);
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });

  const show = (...extra: string[]) =>
    runCli([
      'sensor',
      'show',
      'sophos',
      '--data-dir',
      dataDir,
      '--syslog-errors',
      '--admin-listen',
      admin,
      ...extra,
    ]);
  let report: SyslogErrorsReport | undefined;
  for (let i = 0; i < 100; i++) {
    const shown = await show('--json');
    assert.equal(shown.code, 0, shown.stderr);
    report = JSON.parse(shown.stdout) as SyslogErrorsReport;
    if (report.counts[0]?.stored === 2 && report.counts[0]?.incomplete === 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(report);
  assert.deepEqual(report.counts, [
    {
      sensor: 'sophos',
      format: 'cef',
      received: 29,
      stored: 2,
      other: 1,
      invalid: 26,
      truncated: 1,
      incomplete: 2,
    },
  ]);
  assert.equal(report.samples.length, 20);
  assert.deepEqual(
    report.samples.slice(0, 19).map((s) => s.message),
    bad.slice(6),
    'the oldest samples went first',
  );
  for (const s of report.samples) assert.equal(s.remoteAddr, '127.0.0.1');
  assert.equal(report.samples[0]?.reason, 'source address is malformed');
  const last = report.samples[19];
  assert.equal(last?.reason, 'no CEF: header');
  assert.equal(last?.bytes, 2048, 'the message as kept (cut to syslog.maxMessageBytes)');
  assert.equal(last?.message, wrongFormat.slice(0, 1024), 'the sample holds its first 1 KiB');

  const text = await show();
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /cef: 29 received, 2 stored, 1 not threats, 26 unreadable, 1 over the size limit, 2 cut off by the connection's end/,
  );
  assert.match(text.stdout, /no CEF: header \(first 1024 of 2048 bytes\)/);

  // The same counters in /metrics, and the refused connection of an address no sensor lists (127.0.0.2).
  await new Promise<void>((resolve) => {
    const s = connect({ port: tcp, host: '127.0.0.1', localAddress: '127.0.0.2' }, () => s.end(threat));
    s.on('error', () => resolve());
    s.on('close', () => resolve());
  });
  const families = parseExposition(await (await fetch(`${serve.adminUrl}/metrics`)).text());
  const value = (name: string, labels: Record<string, string>) =>
    families.get(name)?.samples.find((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v))
      ?.value;
  const cef = { sensor: 'sophos', format: 'cef' };
  assert.equal(value('threatcol_syslog_messages_received_total', cef), 29);
  assert.equal(value('threatcol_syslog_messages_stored_total', cef), 2);
  assert.equal(value('threatcol_syslog_messages_other_total', cef), 1);
  assert.equal(value('threatcol_syslog_messages_invalid_total', cef), 26);
  assert.equal(value('threatcol_syslog_messages_truncated_total', cef), 1);
  assert.equal(value('threatcol_syslog_messages_incomplete_total', cef), 2);
  assert.equal(value('threatcol_syslog_connections_refused_total', { reason: 'no_sensor' }), 1);
  assert.equal(value('threatcol_syslog_connections_refused_total', { reason: 'limit' }), 0);

  // The counters live in the daemon's memory: without one the command says so (exit 69).
  await serve.stop();
  const gone = await show();
  assert.equal(gone.code, 69);
  assert.match(gone.stderr, /CONNECTION_FAILED/);
});
