// The one check of registry entries both backends use: no value makes it throw, and its report says a set of
// bad entries once (a registry re-read every few seconds must not repeat it), and when they are gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { SyslogSenders } from '../../src/inputs/syslog/syslog-senders.js';
import type { Sensor } from '../../src/store/registry.js';
import {
  createRejectedReport,
  parseEntry,
  sensorProblem,
  sortEntries,
} from '../../src/store/sensor-entries.js';

const valid = {
  name: 'fw1',
  description: '',
  timezone: 'Europe/Berlin',
  status: 'active',
  created_at: '2026-11-26T10:00:00.000Z',
  revoked_at: null,
  keys: [{ hash: 'sha256:00', created_at: '2026-11-26T10:00:00.000Z', expires_at: null }],
};

test('sensor entries: a valid sensor passes; any value or text is judged without throwing', () => {
  assert.equal(sensorProblem(valid), null);
  assert.equal(sensorProblem(parseEntry('{not json')), 'not JSON');
  assert.deepEqual(
    sortEntries([
      { entry: 'a', value: valid },
      { entry: 'b', value: { ...valid, keys: undefined } },
    ]).rejected,
    [{ entry: 'b', reason: 'keys is not a list' }],
  );
  fc.assert(fc.property(fc.anything(), (value) => sensorProblem(value) !== undefined));
  fc.assert(fc.property(fc.string(), (text) => sensorProblem(parseEntry(text)) !== undefined));
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom(...Object.keys(valid)), fc.anything()), (changes) => {
      const reason = sensorProblem({ ...valid, ...changes });
      assert.ok(reason === null || typeof reason === 'string');
    }),
  );
});

test('sensor entries: the report warns once per distinct set, in any order, and says when all are valid again', () => {
  const lines: { level: number; msg: string }[] = [];
  const report = createRejectedReport(
    pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }),
    'test',
  );
  const a = { entry: 'a', reason: 'x' };
  const b = { entry: 'b', reason: 'y' };
  report([]);
  report([a, b]);
  report([b, a]);
  report([a, b]);
  report([a]);
  report([]);
  report([]);
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg.split(' ').slice(0, 2).join(' ')]),
    [
      [40, '2 sensor'],
      [40, '1 sensor'],
      [30, 'every sensor'],
    ],
  );
});

test('sensor entries: a syslog identity the check passes never makes the listener throw; the shapes it refuses', () => {
  const syslog = { format: 'cef', from: ['192.0.2.0/24'], client_cert_sha256: ['ab'.repeat(32)] };
  assert.equal(sensorProblem({ ...valid, syslog }), null);
  for (const [bad, reason] of [
    [5, /^syslog is not a JSON object/],
    [null, /^syslog is not a JSON object/],
    [{ ...syslog, from: 5 }, /^syslog\.from /],
    [{ ...syslog, from: [5] }, /^syslog\.from /],
    [{ ...syslog, from: ['192.0.2.0/33'] }, /^syslog\.from /],
    [{ format: 'cef', client_cert_sha256: [] }, /^syslog\.from /],
    [{ ...syslog, client_cert_sha256: 'abc' }, /^syslog\.client_cert_sha256 /],
    [{ ...syslog, client_cert_sha256: ['abc'] }, /^syslog\.client_cert_sha256 /],
    [{ ...syslog, client_ca: 1, client_cn: 'fw' }, /^syslog\.client_ca /],
    [{ ...syslog, client_ca: 'not PEM', client_cn: 'fw' }, /^syslog\.client_ca /],
    [{ ...syslog, client_cn: 'fw' }, /^syslog\.client_ca /],
    [{ ...syslog, format: 5 }, /^syslog\.format /],
  ] as const) {
    assert.match(sensorProblem({ ...valid, syslog: bad }) ?? 'accepted', reason, JSON.stringify(bad));
  }
  const senders = new SyslogSenders();
  fc.assert(
    fc.property(
      fc.dictionary(fc.constantFrom(...Object.keys(syslog), 'client_ca', 'client_cn'), fc.anything()),
      (changes) => {
        const sensor = { ...valid, syslog: { ...syslog, ...changes } };
        if (sensorProblem(sensor) !== null) return;
        senders.update([sensor as Sensor]);
        senders.match('192.0.2.7', null);
        senders.clientCas();
      },
    ),
  );
});

test('sensor entries: a syslog format is one of the four, exactly; a name every object inherits is none', () => {
  const syslog = { format: 'cef', from: ['192.0.2.0/24'], client_cert_sha256: [] };
  for (const format of ['panos', 'cef', 'fortinet', 'suricata'])
    assert.equal(sensorProblem({ ...valid, syslog: { ...syslog, format } }), null, format);
  for (const format of [
    'PANOS',
    'Cef',
    'cef ',
    'constructor',
    'toString',
    '__proto__',
    'hasOwnProperty',
    '',
  ]) {
    assert.equal(
      sensorProblem({ ...valid, syslog: { ...syslog, format } }),
      'syslog.format is not one of panos, cef, fortinet, suricata',
      format,
    );
  }
});

test('sensor entries: expect_every is a duration or "off" when present; an entry written before it reads', () => {
  assert.equal(sensorProblem(valid), null, 'no expect_every: sensors.expectEvery applies');
  for (const good of ['1h', '30s', '1h30m', '2w', 'off'])
    assert.equal(sensorProblem({ ...valid, expect_every: good }), null);
  for (const bad of ['', '0s', '500ms', 'soon', 3600, null, 'OFF']) {
    assert.equal(
      sensorProblem({ ...valid, expect_every: bad }),
      'expect_every is neither "off" nor a duration of at least 1s',
      String(bad),
    );
  }
});
