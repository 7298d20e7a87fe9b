// The syslog header readers: RFC 5424 and RFC 3164 (BSD) on the RFCs' own examples and real senders' shapes.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { bsdTimeToIso, rfc3339ToIso } from '../../src/inputs/syslog/sender-time.js';
import { parseSyslogHeader, type SyslogMessage } from '../../src/inputs/syslog/syslog-header.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const ctx = { timezone: 'Europe/Berlin', nowMs: NOW };

function parsed(text: string, context = ctx): SyslogMessage {
  const result = parseSyslogHeader(text, context);
  assert.ok(result.ok, result.ok ? '' : result.reason);
  return result.message;
}

test('RFC 5424: every header field, structured data with escapes, the BOM taken off the message', () => {
  const m = parsed(
    '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Appli\\"cation\\]" eventID="1011"][examplePriority@32473 class="high"] \ufeffAn application event',
  );
  assert.deepEqual(m, {
    header: 'rfc5424',
    facility: 20,
    severity: 5,
    timestamp: '2003-10-11T22:14:15.003Z',
    hostname: 'mymachine.example.com',
    appName: 'evntslog',
    procId: undefined,
    msgId: 'ID47',
    structuredData:
      '[exampleSDID@32473 iut="3" eventSource="Appli\\"cation\\]" eventID="1011"][examplePriority@32473 class="high"]',
    msg: 'An application event',
    content: 'An application event',
  });
});

test('RFC 5424: offsets are applied, NILVALUEs are absent, a message may be missing', () => {
  const m = parsed('<34>1 2003-08-24T05:14:15.000003-07:00 - - - - -');
  assert.equal(m.timestamp, '2003-08-24T12:14:15.000Z');
  assert.equal(m.hostname, undefined);
  assert.equal(m.structuredData, undefined);
  assert.equal(m.msg, '');
});

test('RFC 5424: a broken header is refused with a reason, not half-read', () => {
  for (const text of [
    '<34>1 2003-13-24T05:14:15Z host app - - - msg', // month 13
    '<34>1 2003-08-24T05:14:15Z host app', // cut short
    '<34>1 - host app - - [unclosed x="1" msg',
    '<34>1 - host app - - [a x="1"]msg', // no space after SD
    '<192>1 - - - - - -', // PRI over 191
    '34>1 - - - - - -',
    '<034>Nov 26 10:00:00 host x',
  ]) {
    const result = parseSyslogHeader(text, ctx);
    assert.equal(result.ok, false, text);
  }
});

test("BSD: the time is read in the sensor's zone, the year inferred, TAG and pid split off", () => {
  const m = parsed('<13>Nov 26 12:30:00 fw01 suricata[4242]: {"event_type":"alert"}');
  assert.equal(m.header, 'rfc3164');
  assert.equal(m.timestamp, '2026-11-26T11:30:00.000Z'); // Berlin is UTC+1 in November
  assert.deepEqual(
    [m.hostname, m.appName, m.procId, m.msg],
    ['fw01', 'suricata', '4242', '{"event_type":"alert"}'],
  );
  // A space-padded day, in summer time.
  assert.equal(parsed('<13>Jul  6 02:00:00 fw01 x: y').timestamp, '2026-07-06T00:00:00.000Z');
});

test('BSD: a December time read in early January belongs to last year; one a little ahead on New Year to next', () => {
  assert.equal(
    bsdTimeToIso('Dec 31 23:59:00', 'UTC', Date.parse('2027-01-01T00:05:00Z')),
    '2026-12-31T23:59:00.000Z',
  );
  assert.equal(
    bsdTimeToIso('Jan  1 00:00:30', 'UTC', Date.parse('2026-12-31T23:59:50Z')),
    '2027-01-01T00:00:30.000Z',
  );
  assert.equal(
    bsdTimeToIso('Feb 29 10:00:00', 'UTC', Date.parse('2028-03-01T00:00:00Z')),
    '2028-02-29T10:00:00.000Z',
  );
  assert.equal(bsdTimeToIso('Feb 30 10:00:00', 'UTC', NOW), undefined);
});

test('BSD: PAN-OS CSV has no TAG; a CEF message is no TAG either, and stays whole in `content`', () => {
  const pan = parsed('<14>Nov 26 12:00:00 PA-VM 1,2026/11/26 12:00:00,0123,THREAT,vulnerability');
  assert.equal(pan.hostname, 'PA-VM');
  assert.equal(pan.appName, undefined);
  assert.equal(pan.msg, '1,2026/11/26 12:00:00,0123,THREAT,vulnerability');
  const cef = parsed('<134>Nov 26 12:00:00 cp-gw CEF:0|Check Point|VPN-1|R81|1|Attack|8|src=10.0.0.1');
  assert.equal(cef.content, 'CEF:0|Check Point|VPN-1|R81|1|Attack|8|src=10.0.0.1');
});

test('BSD without a timestamp (FortiGate): everything after PRI is the message; an RFC 3339 time is read too', () => {
  const m = parsed('<185>date=2026-11-26 time=12:00:00 devname="FG100" type="utm"');
  assert.deepEqual(
    [m.timestamp, m.hostname, m.appName, m.msg],
    [undefined, undefined, undefined, 'date=2026-11-26 time=12:00:00 devname="FG100" type="utm"'],
  );
  const iso = parsed('<13>2026-11-26T12:00:00+01:00 relay app: text');
  assert.deepEqual(
    [iso.timestamp, iso.hostname, iso.appName, iso.msg],
    ['2026-11-26T11:00:00.000Z', 'relay', 'app', 'text'],
  );
});

test('rfc3339ToIso refuses what is no time', () => {
  for (const text of ['2026-02-30T00:00:00Z', '2026-11-26T24:00:00Z', '2026-11-26T12:00:00', 'now']) {
    assert.equal(rfc3339ToIso(text), undefined, text);
  }
});

test("property: any text gives a message or a reason, never an exception, and a message keeps the input's tail", () => {
  const piece = fc.constantFrom(
    '<',
    '>',
    '1',
    '13',
    '165',
    ' ',
    '-',
    '[',
    ']',
    '"',
    '\\',
    '=',
    ':',
    'Nov',
    '26',
    '12:00:00',
    'T',
    'Z',
    '\ufeff',
  );
  const text = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.array(piece, { maxLength: 40 }).map((p) => p.join('')),
  );
  fc.assert(
    fc.property(text, fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York'), (t, zone) => {
      const result = parseSyslogHeader(t, { timezone: zone, nowMs: NOW });
      if (result.ok) assert.ok(t.endsWith(result.message.msg) || t.endsWith(`\ufeff${result.message.msg}`));
      else assert.equal(typeof result.reason, 'string');
    }),
    { seed: 20261126, numRuns: 3000 },
  );
});

test('property: rfc3339ToIso of a UTC time with milliseconds (read by hand) is what Date makes of it, or undefined', () => {
  // Each field up to just past its range, so both real times and near misses (Feb 30, 24:00, :60) come up.
  const field = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
  const fields = [field(13), field(32), field(24), field(60), field(60)] as const;
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 9999 }),
      ...fields,
      fc.integer({ min: 0, max: 999 }),
      (y, mo, d, h, mi, s, ms) => {
        const text = `${String(y).padStart(4, '0')}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, '0')}Z`;
        const parsed = Date.parse(text);
        // A real calendar time is one Date reads and writes back unchanged.
        const real = !Number.isNaN(parsed) && new Date(parsed).toISOString() === text;
        assert.equal(rfc3339ToIso(text), real ? text : undefined, text);
      },
    ),
    { seed: 15, numRuns: 3000 },
  );
});

test('property: <PRI> (read by hand) is `0` or 1-3 digits without a leading zero, as RFC 5424 writes it', () => {
  const pri = /^<(0|[1-9]\d{0,2})>/;
  const piece = fc.constantFrom('<', '>', '0', '1', '9', '19', '191', '192', '007', ' ', 'x');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
      const text = `${pieces.join('')} host app: m`;
      const result = parseSyslogHeader(text, { timezone: 'UTC', nowMs: 0 });
      const m = pri.exec(text);
      if (m === null) assert.deepEqual(result, { ok: false, reason: 'no <PRI> at the start' }, text);
      else if (Number(m[1]) > 191) assert.deepEqual(result, { ok: false, reason: `PRI ${m[1]} is over 191` });
      else
        assert.equal(result.ok && result.message.facility * 8 + result.message.severity, Number(m[1]), text);
    }),
    { seed: 16, numRuns: 2000 },
  );
});
