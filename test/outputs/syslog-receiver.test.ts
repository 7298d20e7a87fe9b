// The syslog receiver against a real rsyslogd on loopback: over TLS (RFC 5425) and plain TCP, JSON and CEF
// bodies, every record once with its id; a receiver restart is a transient failure, then delivery resumes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Config } from '../../src/config/schema.js';
import { TransientDeliveryError } from '../../src/outputs/receivers/receiver.js';
import { createSyslogReceiver, type SyslogOptions } from '../../src/outputs/receivers/syslog-receiver.js';
import { loadTlsMaterial } from '../../src/tls/tls-material.js';
import { memoryLogger, outgoingRecords } from '../helpers/outgoing.js';
import { type Rsyslog, startRsyslog } from '../helpers/rsyslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

const options = (rsyslog: Rsyslog, overrides: Partial<SyslogOptions>): SyslogOptions => ({
  host: '127.0.0.1',
  port: rsyslog.port,
  transport: 'tls',
  format: 'json',
  facility: 'local0',
  ca: rsyslog.ca,
  hostname: 'collector1',
  sdId: 'threatcol@32473',
  connectTimeoutMs: 5000,
  writeTimeoutMs: 10_000,
  ...overrides,
});

/** rsyslog's line: `threat [threatcol@32473 id="…" sensor="…" criticality="…"] BODY`. */
function parseLine(line: string): { id: string; body: string } {
  const match =
    /^threat \[threatcol@32473 id="([^"]+)" sensor="(?:[^"\\]|\\.)*" criticality="\d"\] (.*)$/.exec(line);
  assert.ok(match, `unexpected line: ${line}`);
  return { id: match[1] as string, body: match[2] as string };
}

const tricky = (i: number) => ({
  threat: `evil | name = x \\ y\nline ${i} é 🛡️ "quoted" ]`,
  sensor: `fw"${i % 3}]`,
  criticality: i % 5,
});

test('over TLS, JSON bodies: every record arrives once, with its id and its stored line intact', async (t) => {
  const dir = makeTempDir(t);
  const rsyslog = await startRsyslog(dir, 'tls');
  t.after(() => rsyslog.stop());
  const { logger } = memoryLogger();
  const receiver = createSyslogReceiver(options(rsyslog, {}), { logger });
  t.after(() => receiver.close());
  const records = outgoingRecords(600, tricky);
  for (let i = 0; i < records.length; i += 200) {
    assert.deepEqual(await receiver.send(records.slice(i, i + 200), AbortSignal.timeout(30_000)), {
      refused: [],
      retry: [],
    });
  }
  await until(() => rsyslog.lines().length >= records.length, 30_000, 'rsyslog wrote every record');
  const got = rsyslog.lines().map(parseLine);
  assert.equal(got.length, records.length);
  assert.deepEqual(
    got.map((line) => line.body),
    records.map((record) => record.line),
  );
  assert.deepEqual(
    got.map((line) => line.id),
    records.map((record) => record.id),
  );
});

test('over plain TCP, CEF bodies: every record once, its id as externalId, the escapes keep the fields', async (t) => {
  const dir = makeTempDir(t);
  const rsyslog = await startRsyslog(dir, 'tcp');
  t.after(() => rsyslog.stop());
  const { logger } = memoryLogger();
  const receiver = createSyslogReceiver(options(rsyslog, { transport: 'tcp', format: 'cef' }), { logger });
  t.after(() => receiver.close());
  const records = outgoingRecords(300, tricky);
  await receiver.send(records, AbortSignal.timeout(30_000));
  await until(() => rsyslog.lines().length >= records.length, 30_000, 'rsyslog wrote every record');
  const got = rsyslog.lines().map(parseLine);
  assert.equal(got.length, records.length);
  got.forEach((line, i) => {
    const record = records[i];
    assert.ok(record);
    assert.equal(line.id, record.id);
    const header = line.body.match(
      /^CEF:0\|threatcol\|threatcol\|[^|]*\|((?:[^|\\]|\\.)*)\|((?:[^|\\]|\\.)*)\|(\d+)\|(.*)$/,
    );
    assert.ok(header, line.body);
    assert.equal(header[2]?.replace(/\\(.)/g, '$1'), record.record.threat.replace(/\n/g, ' '));
    assert.equal(header[3], String([1, 3, 5, 8, 10][record.record.criticality]));
    assert.match(header[4] as string, new RegExp(` externalId=${record.id} `));
  });
});

test('a receiver restart mid-stream: TransientDeliveryError while it is down, then delivery resumes', async (t) => {
  const dir = makeTempDir(t);
  const rsyslog = await startRsyslog(dir, 'tls');
  t.after(() => rsyslog.stop());
  const { logger, text } = memoryLogger();
  const receiver = createSyslogReceiver(options(rsyslog, {}), { logger });
  t.after(() => receiver.close());
  const [before, during, after] = [outgoingRecords(100), outgoingRecords(100), outgoingRecords(100)];
  await receiver.send(before, AbortSignal.timeout(30_000));
  await until(() => rsyslog.lines().length >= 100, 30_000, 'the first batch written');
  await rsyslog.stop();
  // The peer's FIN and the child's exit are separate events: let the socket's end be read first.
  await until(() => text().includes('connection lost'), 10_000, 'the receiver noticed the closed connection');
  await assert.rejects(receiver.send(during, AbortSignal.timeout(30_000)), TransientDeliveryError);
  await rsyslog.start();
  await receiver.send(during, AbortSignal.timeout(30_000));
  await receiver.send(after, AbortSignal.timeout(30_000));
  await until(() => rsyslog.lines().length >= 300, 30_000, 'every batch written');
  assert.deepEqual(
    rsyslog.lines().map((line) => parseLine(line).id),
    [...before, ...during, ...after].map((record) => record.id),
  );
});

test('over TLS, a receiver whose certificate the configured CA did not sign is a transient failure, not a send', async (t) => {
  const dir = makeTempDir(t);
  const rsyslog = await startRsyslog(dir, 'tls');
  t.after(() => rsyslog.stop());
  const other = await loadTlsMaterial(
    { cert: null, key: null, selfSignedKeyType: 'ecdsa' } as Config['tls'],
    makeTempDir(t),
    null,
  );
  const { logger } = memoryLogger();
  const receiver = createSyslogReceiver(options(rsyslog, { ca: other.cert }), { logger });
  t.after(() => receiver.close());
  await assert.rejects(receiver.send(outgoingRecords(3), AbortSignal.timeout(30_000)), (error) => {
    assert.ok(error instanceof TransientDeliveryError);
    assert.match(error.message, /certificate/);
    return true;
  });
  assert.deepEqual(rsyslog.lines(), []);
});

test('an aborted signal sends nothing and rejects with its reason', async (t) => {
  const dir = makeTempDir(t);
  const rsyslog = await startRsyslog(dir, 'tcp');
  t.after(() => rsyslog.stop());
  const { logger } = memoryLogger();
  const receiver = createSyslogReceiver(options(rsyslog, { transport: 'tcp' }), { logger });
  t.after(() => receiver.close());
  const controller = new AbortController();
  controller.abort(new Error('reload'));
  await assert.rejects(receiver.send(outgoingRecords(1), controller.signal), /reload/);
  assert.deepEqual(rsyslog.lines(), []);
});
