// The addresses and threat the decisions engine reads off a stored line (store/output-line.ts engineFieldsOf)
// never disagree with parsing the line whole: on lines the feed checked off their bytes (the writer's form)
// and on lines it parsed (any other form), whatever the values hold (escapes, keys' bytes inside `original`).
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { newRecordId } from '../../src/records/record-id.js';
import { engineFieldsOf, outputLineOf } from '../../src/store/output-line.js';
import { parseStoredRecord } from '../../src/store/record-shape.js';

const tricky = fc.constantFrom(
  'a',
  '1',
  '.',
  ':',
  'é',
  '😀',
  '"',
  '\\',
  '\u0000',
  '\u001f',
  ',"src_ip":"',
  ',"threat":"',
);
const text = fc.oneof(
  fc.constantFrom('192.0.2.1', '2001:db8::1', '', 'ET SCAN Nmap'),
  fc.string({ unit: tricky, minLength: 0, maxLength: 6 }),
);

/** A record's line in the writer's field order, or with its fields moved (`original` first: parsed whole). */
const line = fc
  .record({
    src_ip: text,
    dst_ip: text,
    threat: text,
    original: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.record({ src_ip: text, threat: text })),
    reordered: fc.boolean(),
  })
  .map((r) => {
    const original = typeof r.original === 'object' && r.original !== null ? r.original : { v: r.original };
    const head = {
      id: newRecordId(),
      received_at: '2026-11-28T09:00:00.000Z',
      sensor: 'fw1',
      endpoint: 'generic',
      criticality: 3,
    };
    const rest = {
      severity: 'high',
      criticality_source: 'sender',
      src_ip: r.src_ip,
      dst_ip: r.dst_ip,
      dst_port: 443,
      protocol: 'tcp',
      threat: r.threat,
      remote_addr: '127.0.0.1',
    };
    return JSON.stringify(r.reordered ? { original, ...head, ...rest } : { ...head, ...rest, original });
  });

function agrees(textLine: string): void {
  const buf = Buffer.from(`pad\n${textLine}\nmore`, 'utf8');
  const read = outputLineOf(buf, 4, buf.length - 5, 'head');
  const record = parseStoredRecord(textLine);
  if (read === null) {
    assert.equal(record, null);
    return;
  }
  assert.ok(record !== null);
  const fields = engineFieldsOf(read);
  assert.deepEqual(
    { src_ip: fields.src_ip, dst_ip: fields.dst_ip, threat: fields.threat() },
    { src_ip: record.src_ip, dst_ip: record.dst_ip, threat: record.threat },
    textLine,
  );
}

test('property: the engine reads the same addresses and threat as the parse, in any form of line', () => {
  fc.assert(fc.property(line, agrees), { numRuns: 3000 });
});

test('a line in the writer form with escapes, and one with an original first, read as parsed', () => {
  const base = {
    id: newRecordId(),
    received_at: '2026-11-28T09:00:00.000Z',
    sensor: 'fw1',
    endpoint: 'generic',
    criticality: 4,
    severity: 'critical',
    criticality_source: 'sender',
    src_ip: '203.0.113.9',
    dst_ip: '198.51.100.2',
    dst_port: 22,
    protocol: 'tcp',
    threat: 'say "hi"',
    remote_addr: '127.0.0.1',
    original: { src_ip: '192.0.2.66', threat: 'decoy' },
  };
  agrees(JSON.stringify(base));
  const { original, ...rest } = base;
  agrees(JSON.stringify({ original, ...rest }));
  agrees(JSON.stringify({ ...base, threat: 'plain' }));
});
