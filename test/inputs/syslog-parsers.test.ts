// The syslog format parsers on real-looking samples (test/fixtures/syslog/), and fuzzed: complete or invalid.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import fc from 'fast-check';
import { FORMAT_PARSERS, type SyslogFormat } from '../../src/inputs/syslog/parsers/format-parsers.js';
import { splitCsv } from '../../src/inputs/syslog/parsers/panos.js';
import type { ParseResult } from '../../src/inputs/syslog/parsers/parse-result.js';
import { parseSyslogHeader } from '../../src/inputs/syslog/syslog-header.js';

const NOW = Date.parse('2026-11-26T12:30:00Z');
const ctx = { timezone: 'Europe/Berlin', defaultCriticality: 2 };

function samples(format: SyslogFormat): string[] {
  const text = readFileSync(new URL(`../fixtures/syslog/${format}.log`, import.meta.url), 'utf8');
  return text.split('\n').filter(Boolean);
}

function parse(format: SyslogFormat, line: string): ParseResult {
  const header = parseSyslogHeader(line, { timezone: ctx.timezone, nowMs: NOW });
  assert.ok(header.ok, line);
  return FORMAT_PARSERS[format](header.message, ctx);
}

const parseAll = (format: SyslogFormat) => samples(format).map((line) => parse(format, line));

test('panos: THREAT logs in BSD and IETF syslog by the documented columns; quoted commas; a TRAFFIC log is other', () => {
  assert.deepEqual(parseAll('panos'), [
    {
      kind: 'threat',
      fields: {
        criticality: 2,
        criticality_source: 'severity',
        src_ip: '10.1.1.5',
        dst_ip: '203.0.113.9',
        src_port: 51000,
        dst_port: 80,
        protocol: 'tcp',
        threat: 'Eicar File Detected',
        threat_id: '39040',
        detected_at: '2026-11-26T11:00:04.000Z', // generated time, read in the sensor's zone (UTC+1)
      },
    },
    {
      kind: 'threat',
      fields: {
        criticality: 4,
        criticality_source: 'severity',
        src_ip: '203.0.113.77',
        dst_ip: '10.1.1.20',
        src_port: 44321,
        dst_port: 443,
        protocol: 'tcp',
        threat: 'Apache Log4j Remote Code Execution Vulnerability',
        threat_id: '91991',
        detected_at: '2026-11-26T11:00:59.000Z',
      },
    },
    {
      kind: 'threat',
      fields: {
        criticality: 3,
        criticality_source: 'severity',
        src_ip: '10.1.1.30',
        dst_ip: '2001:db8::53',
        src_port: 53001,
        dst_port: 53,
        protocol: 'udp',
        threat: 'Suspicious DNS Query (generic:evil.example)',
        threat_id: '109001001',
        detected_at: '2026-11-26T11:01:58.000Z',
      },
    },
    { kind: 'other', what: 'TRAFFIC/end' },
  ]);
});

test('cef: header and extension escapes, numeric and label severities, epoch and local rt; traffic is other', () => {
  const [checkPoint, escapes, sophos, traffic] = parseAll('cef');
  assert.deepEqual(checkPoint, {
    kind: 'threat',
    fields: {
      criticality: 3,
      criticality_source: 'severity',
      src_ip: '10.1.1.5',
      dst_ip: '203.0.113.9',
      src_port: 51000,
      dst_port: 80,
      protocol: 'tcp',
      threat: 'Web Server Enforcement Violation',
      threat_id: 'IPS',
      detected_at: '2026-11-26T12:00:05.000Z',
    },
  });
  assert.deepEqual(escapes, {
    kind: 'threat',
    fields: {
      criticality: 4,
      criticality_source: 'severity',
      src_ip: '10.0.0.1',
      dst_ip: '2001:db8::1',
      src_port: 1232,
      dst_port: 443,
      protocol: 'tcp',
      threat: 'detected a | in packet \\ here',
      threat_id: '100',
      detected_at: '2026-11-26T11:00:06.000Z', // `rt` without zone: the sensor's
    },
  });
  // No source port, no rt: the header's BSD time (in the sensor's zone) is the detection time.
  assert.deepEqual(sophos, {
    kind: 'threat',
    fields: {
      criticality: 2,
      criticality_source: 'severity',
      src_ip: '10.1.1.7',
      dst_ip: '198.51.100.4',
      dst_port: 80,
      protocol: 'tcp',
      threat: 'Virus detected',
      threat_id: '2',
      detected_at: '2026-11-26T11:00:07.000Z',
    },
  });
  assert.deepEqual(traffic, { kind: 'other', what: 'traffic:forward accept' });
});

test('fortinet: IPS, antivirus and web filter UTM logs, quoted and bare values, the log tz; traffic is other', () => {
  const [ips, virus, web, traffic] = parseAll('fortinet');
  assert.deepEqual(ips, {
    kind: 'threat',
    fields: {
      criticality: 4,
      criticality_source: 'severity',
      src_ip: '10.1.1.5',
      dst_ip: '203.0.113.9',
      src_port: 51000,
      dst_port: 80,
      protocol: 'tcp',
      threat: 'Apache.Log4j.Error.Log.Remote.Code.Execution',
      threat_id: '51006',
      detected_at: '2026-11-26T11:00:05.000Z',
    },
  });
  assert.deepEqual(virus, {
    kind: 'threat',
    fields: {
      criticality: 2, // no severity: level "warning"
      criticality_source: 'severity',
      src_ip: '10.1.1.6',
      dst_ip: '198.51.100.4',
      src_port: 51010,
      dst_port: 80,
      protocol: 'tcp',
      threat: 'EICAR_TEST_FILE',
      threat_id: '2172',
      detected_at: '2026-11-26T11:01:00.000Z', // no tz field: the sensor's zone
    },
  });
  assert.deepEqual(web, {
    kind: 'threat',
    fields: {
      criticality: 3,
      criticality_source: 'severity',
      src_ip: '10.1.1.8',
      dst_ip: '203.0.113.50',
      src_port: 51020,
      dst_port: 443,
      protocol: 'tcp',
      threat: 'Malicious Websites',
      threat_id: '26',
      detected_at: '2026-11-26T11:02:00.000Z',
    },
  });
  assert.deepEqual(traffic, { kind: 'other', what: 'traffic/forward' });
});

test('suricata: EVE alerts with and without ports, severity 1-3; a flow event is other', () => {
  const [alert, icmp, flow] = parseAll('suricata');
  assert.deepEqual(alert, {
    kind: 'threat',
    fields: {
      criticality: 2,
      criticality_source: 'severity',
      src_ip: '10.1.1.5',
      dst_ip: '203.0.113.9',
      src_port: 51000,
      dst_port: 80,
      protocol: 'tcp',
      threat: 'ET USER_AGENTS Go HTTP Client User-Agent',
      threat_id: '2024897',
      detected_at: '2026-11-26T11:00:05.123Z',
    },
  });
  assert.deepEqual(icmp, {
    kind: 'threat',
    fields: {
      criticality: 1,
      criticality_source: 'severity',
      src_ip: '203.0.113.66',
      dst_ip: '10.1.1.1',
      dst_port: 0,
      protocol: 'icmp',
      threat: 'GPL ICMP_INFO PING *NIX',
      threat_id: '2100366',
      detected_at: '2026-11-26T12:01:00.000Z',
    },
  });
  assert.deepEqual(flow, { kind: 'other', what: 'flow' });
});

test('a threat with a malformed field is invalid with a reason, never stored half-read', () => {
  const cases: [SyslogFormat, string, RegExp][] = [
    ['panos', samples('panos')[0]?.replace('10.1.1.5', '10.1.1.500') ?? '', /source address/],
    ['panos', samples('panos')[0]?.replace(',51000,', ',port,') ?? '', /source port/],
    ['panos', '<14>Nov 26 12:00:05 PA-VM 1,2026/11/26 12:00:05,0128,THREAT,virus,2561', /columns/],
    ['cef', '<134>CEF:0|a|b|1|2|name|5|src=10.0.0.1 dst=10.0.0.2 dpt=99999', /destination port/],
    ['cef', '<134>CEF:0|a|b|1|2|name|5', /fewer than 8/],
    ['fortinet', '<185>type="utm" subtype="ips" srcip=10.0.0.1 dstip=10.0.0.2 attack="x', /unclosed quote/],
    ['fortinet', '<185>type=utm subtype=ips srcip=10.0.0.1 dstip=10.0.0.2 dstport=80', /no threat name/],
    ['suricata', '<14>x: {"event_type":"alert","src_ip":"10.0.0.1","dest_ip":{},"alert":{}}', /dst_ip/],
    ['suricata', '<14>x: {"event_type":"alert","src_ip":"10.0.0.1","dest_ip":"10.0.0.2"', /does not parse/],
  ];
  for (const [format, line, reason] of cases) {
    const result = parse(format, line);
    assert.equal(result.kind, 'invalid', line);
    assert.match((result as { reason: string }).reason, reason, line);
  }
});

/** A threat result is complete: addresses, ports in range, a name, a time that is UTC ISO. */
function assertComplete(result: ParseResult): void {
  if (result.kind === 'invalid') assert.equal(typeof result.reason, 'string');
  if (result.kind !== 'threat') return;
  const f = result.fields;
  assert.ok(f.src_ip.length > 0 && f.dst_ip.length > 0 && f.threat.trim() === f.threat && f.threat !== '');
  assert.ok(Number.isInteger(f.dst_port) && f.dst_port >= 0 && f.dst_port <= 65535);
  assert.ok(f.src_port === undefined || (Number.isInteger(f.src_port) && f.src_port <= 65535));
  assert.ok(Number.isInteger(f.criticality) && f.criticality >= 0 && f.criticality <= 4);
  if (f.detected_at !== undefined) assert.match(f.detected_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

for (const format of Object.keys(FORMAT_PARSERS) as SyslogFormat[]) {
  test(`property (${format}): truncated and mutated samples, and random text, never throw and give a complete threat or none`, () => {
    const lines = samples(format);
    const sample = fc.constantFrom(...lines);
    const truncated = fc.tuple(sample, fc.nat()).map(([line, n]) => line.slice(0, n % (line.length + 1)));
    const mutated = fc
      .tuple(sample, fc.nat(), fc.nat(12), fc.string({ maxLength: 6 }))
      .map(([line, at, cut, insert]) => {
        const i = at % (line.length + 1);
        return line.slice(0, i) + insert + line.slice(i + cut);
      });
    const random = fc.string({ maxLength: 300 }).map((s) => `<14>${s}`);
    fc.assert(
      fc.property(fc.oneof(truncated, mutated, random), (line) => {
        const header = parseSyslogHeader(line, { timezone: ctx.timezone, nowMs: NOW });
        if (!header.ok) return;
        assertComplete(FORMAT_PARSERS[format](header.message, ctx));
      }),
      { seed: 20261126, numRuns: 3000 },
    );
  });
}

test('property: splitCsv skipping the columns it is not asked for gives the full split with those left empty', () => {
  const piece = fc.constantFrom(',', '"', '""', 'a', 'b c', ' ');
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 30 }),
      fc.integer({ min: 1, max: 12 }),
      fc.uniqueArray(fc.nat(12)),
      (pieces, limit, wanted) => {
        const line = pieces.join('');
        const read = new Set(wanted);
        const full = splitCsv(line, limit);
        const expected = full?.map((field, i) => (read.has(i) ? field : ''));
        assert.deepEqual(splitCsv(line, limit, read), expected, line);
      },
    ),
    { seed: 17, numRuns: 3000 },
  );
});
