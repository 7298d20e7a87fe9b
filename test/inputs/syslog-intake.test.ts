// The intake's records from raw message bytes: whatever the text, the stored bytes are exactly JSON.stringify's.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { createSyslogIntake } from '../../src/inputs/syslog/syslog-intake.js';
import { SyslogTally } from '../../src/inputs/syslog/syslog-tally.js';
import { encodeLines, storedLine } from '../../src/records/stored-line.js';
import type { Sensor } from '../../src/store/registry.js';

const sensor: Sensor = {
  name: 'ids',
  description: '',
  timezone: 'Europe/Berlin',
  status: 'active',
  created_at: '2026-11-26T00:00:00.000Z',
  revoked_at: null,
  keys: [],
  syslog: { format: 'cef', from: ['127.0.0.1/32'], client_cert_sha256: [] },
};

test("property: a message's record, as the intake builds it from the read bytes, is stored as JSON.stringify writes it", () => {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: { dataDir: '/tmp' },
  });
  const tally = new SyslogTally();
  // read() neither appends nor counts records stored: the store and its stats are store()'s, not used here.
  const intake = createSyslogIntake(sensor, '127.0.0.1', {
    config,
    tally,
    logger: pino({ level: 'silent' }),
    now: () => 0,
    recordLog: undefined as never,
    stats: undefined as never,
  });
  let records = 0;
  // Any string, and ones of what JSON escapes or is not ASCII beside plain text.
  const special = fc.constantFrom(
    '"',
    '\\',
    '\u0001',
    '\u001f',
    'é',
    '\ud800',
    '😀',
    '\u007f',
    'a',
    ' ',
    '=',
  );
  const name = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.string({ unit: special, maxLength: 8 }),
  );
  fc.assert(
    fc.property(name, fc.constantFrom('', 'x'), (name, pad) => {
      const text = `<134>1 2026-11-26T12:00:00.000Z ngfw - - - - CEF:0|v|p|1|7|${name}${pad}|5|src=10.0.0.1 dst=10.0.0.2 dpt=80 proto=TCP`;
      // Framed among other bytes, as a read chunk holds it.
      const bytes = Buffer.concat([Buffer.from('12 <13>before '), Buffer.from(text), Buffer.from('\n')]);
      const start = 14;
      const r = intake.read(bytes, start, bytes.length - 1, false, Date.UTC(2026, 10, 26, 12));
      if (r === null) return;
      records++;
      // The text of the bytes (a lone surrogate was sent as U+FFFD's).
      assert.equal(r.original, Buffer.from(text).toString('utf8'));
      assert.equal(storedLine(r), JSON.stringify(r));
      assert.deepEqual(encodeLines([r]), Buffer.from(`${JSON.stringify(r)}\n`, 'utf8'));
    }),
    { seed: 18, numRuns: 500 },
  );
  assert.ok(records > 250, `${records} records built`);
});

test('a format name every object inherits finds no parser: the message is not read, and nothing throws', () => {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: { dataDir: '/tmp' },
  });
  const text = Buffer.from(
    '<134>1 2026-11-26T12:00:00.000Z ngfw - - - - CEF:0|v|p|1|7|Probe|5|src=10.0.0.1 dst=10.0.0.2 dpt=80 proto=TCP',
  );
  for (const format of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    const named = { ...sensor, syslog: { ...(sensor.syslog as NonNullable<Sensor['syslog']>), format } };
    const intakeOf = (of: Sensor) =>
      createSyslogIntake(of, '127.0.0.1', {
        config,
        tally: new SyslogTally(),
        logger: pino({ level: 'silent' }),
        now: () => 0,
        recordLog: undefined as never,
        stats: undefined as never,
      });
    const intake = intakeOf(named);
    assert.equal(intake.read(text, 0, text.length, false, Date.UTC(2026, 10, 26, 12)), null, format);
    // The same for a connection given such a sensor later.
    const reassigned = intakeOf(sensor);
    reassigned.reassign(named);
    assert.equal(reassigned.read(text, 0, text.length, false, Date.UTC(2026, 10, 26, 12)), null, format);
  }
});
