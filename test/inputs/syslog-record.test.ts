// A syslog threat's stored record: built by the intake HTTPS records share, stored durably, read back by tail.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { newRecordId } from '../../src/records/record-id.js';
import { storedLine } from '../../src/records/stored-line.js';
import {
  buildSyslogRecord,
  type ReceiptContext,
  type SyslogThreat,
} from '../../src/records/stored-record.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const ctx = (sensor = 'fw-syslog'): ReceiptContext => {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: { dataDir: '/tmp' },
  });
  return {
    id: newRecordId,
    receivedAt: '2026-11-26T12:00:00.000Z',
    sensor,
    remoteAddr: '192.0.2.1',
    timezone: 'UTC',
    repaired: false,
    rules: config.firewall,
    ascii: false,
    plainStrings: false,
  };
};

const threat: SyslogThreat = {
  criticality: 3,
  criticality_source: 'severity',
  src_ip: '10.1.1.5',
  dst_ip: '203.0.113.9',
  src_port: 51000,
  dst_port: 443,
  protocol: 'tcp',
  threat: 'Eicar File Detected',
  threat_id: '39040',
  detected_at: '2026-11-26T11:59:58.000Z',
};

test('a syslog record carries endpoint, format, the message text as original, and truncated when cut', () => {
  const r = buildSyslogRecord(threat, 'panos', '<14>raw "text"', true, ctx());
  const stored = JSON.parse(storedLine(r)) as Record<string, unknown>;
  assert.equal(storedLine(r), JSON.stringify(r));
  assert.deepEqual(
    [stored.endpoint, stored.format, stored.original, stored.truncated, stored.severity],
    ['syslog', 'panos', '<14>raw "text"', true, 'high'],
  );
  assert.equal(
    JSON.parse(storedLine(buildSyslogRecord(threat, 'cef', 'x', false, ctx()))).truncated,
    undefined,
  );
  // syslog.keepOther's flag, in the same place JSON.stringify puts it.
  const other = buildSyslogRecord(threat, 'panos', '<14>traffic', true, ctx());
  other.other = true;
  assert.equal(storedLine(other), JSON.stringify(other));
  assert.equal(JSON.parse(storedLine(other)).other, true);
});

test("property: a syslog record's stored line is exactly JSON.stringify of it, whatever the strings", () => {
  const text = fc.string({ unit: 'binary', maxLength: 30 });
  fc.assert(
    fc.property(
      text,
      text,
      text,
      text,
      fc.boolean(),
      fc.option(fc.nat(65535), { nil: undefined }),
      (a, b, c, msg, cut, port) => {
        const r = buildSyslogRecord(
          { ...threat, threat: a, protocol: b, threat_id: c, src_port: port },
          'cef',
          msg,
          cut,
          ctx(a),
        );
        assert.equal(storedLine(r), JSON.stringify(r));
      },
    ),
    { seed: 20261126, numRuns: 500 },
  );
});

test('syslog records are stored durably and `threats tail --endpoint syslog` shows only them', async (t) => {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  const log = await store.openRecordLog({ retentionIntervalMs: 0 });
  const syslog = buildSyslogRecord(threat, 'fortinet', 'date=2026-11-26 type="utm"', false, ctx());
  const other = buildSyslogRecord(threat, 'cef', 'CEF:0|a|b|1|2|n|5|', false, ctx());
  other.endpoint = 'generic'; // a record of another endpoint in the same log, which the filter must leave out
  await log.append([syslog, other]);
  await log.close();
  await store.close();

  const json = await runCli([
    'threats',
    'tail',
    '--data-dir',
    dataDir,
    '--no-follow',
    '--json',
    '--endpoint',
    'syslog',
  ]);
  assert.equal(json.code, 0, json.stderr);
  const lines = json.stdout.split('\n').filter(Boolean);
  assert.deepEqual(lines, [storedLine(syslog)]);
  const human = await runCli([
    'threats',
    'tail',
    '--data-dir',
    dataDir,
    '--no-follow',
    '--endpoint',
    'syslog',
  ]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /fw-syslog.*10\.1\.1\.5:51000.*203\.0\.113\.9:443.*Eicar File Detected/);
});
