// Property tests of the syslog output's formatters: whatever a record's strings hold (line breaks, `|`, `=`,
// `\`, `"`, `]`, any Unicode), the octet-counted frame, the structured data and the CEF fields read back intact.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { cefMessage, cefSeverity } from '../../src/outputs/receivers/cef-message.js';
import {
  frameOctetCounted,
  syslogMessage,
  syslogSeverity,
} from '../../src/outputs/receivers/syslog-message.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { storedGenericRecord } from '../helpers/records.js';

const text = fc.string({ unit: 'binary', maxLength: 40 });
const nasty = fc.oneof(text, fc.constantFrom('|', '=', '\\', '\n', '\r\n', '"', ']', 'é', '🛡️', '\\=', '\\|'));
const field = fc.array(nasty, { maxLength: 6 }).map((parts) => parts.join(''));

const recordArb = fc
  .record({
    id: field,
    sensor: field,
    threat: field,
    threat_id: fc.option(field, { nil: undefined }),
    protocol: field,
    criticality: fc.integer({ min: 0, max: 4 }),
    src_ip: fc.oneof(fc.ipV4(), fc.ipV6(), field),
    dst_ip: fc.oneof(fc.ipV4(), fc.ipV6(), field),
    // The enrichment's fields, each present or not.
    src_country: fc.option(fc.constantFrom('US', 'DE'), { nil: undefined }),
    src_asn: fc.option(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { nil: undefined }),
    src_as_org: fc.option(field, { nil: undefined }),
    dst_country: fc.option(fc.constantFrom('FR', 'AU'), { nil: undefined }),
    dst_asn: fc.option(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { nil: undefined }),
    dst_as_org: fc.option(field, { nil: undefined }),
  })
  .map((fields) => storedGenericRecord(fields) as unknown as StoredRecord);

/** Splits on unescaped `|` and undoes `\x` escapes. */
function splitCefHeader(line: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && parts.length < 7) {
      current += line[++i] ?? '';
    } else if (c === '|' && parts.length < 7) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/** `key=value key=value`: keys are the word before an unescaped `=`; values unescaped. */
function parseExtension(extension: string): Map<string, string> {
  const found = new Map<string, string>();
  const equals: number[] = [];
  for (let i = 0; i < extension.length; i++) {
    if (extension[i] === '\\') i++;
    else if (extension[i] === '=') equals.push(i);
  }
  const keyStart = (eq: number) => extension.lastIndexOf(' ', eq) + 1;
  equals.forEach((eq, n) => {
    const next = equals[n + 1];
    const end = next === undefined ? extension.length : keyStart(next) - 1;
    const raw = extension.slice(eq + 1, end);
    found.set(
      extension.slice(keyStart(eq), eq),
      raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : c)),
    );
  });
  return found;
}

test('syslog: the frame length is the byte length, the SD params read back, the header stays printable', () => {
  fc.assert(
    fc.property(recordArb, text, (record, body) => {
      const message = syslogMessage(
        { facility: 'local0', hostname: 'host é\nname', appName: 'threatcol', sdId: 'threatcol@32473' },
        { id: record.id, line: JSON.stringify(record), head: record, record },
        body,
      );
      const frame = frameOctetCounted(message);
      const space = frame.indexOf(0x20);
      assert.equal(Number(frame.subarray(0, space).toString('latin1')), frame.length - space - 1);
      assert.equal(frame.subarray(space + 1).toString('utf8'), message);
      const match =
        /^<(\d+)>1 (\S+) (\S+) threatcol - threat \[threatcol@32473 id="((?:[^"\\\]]|\\.)*)" sensor="((?:[^"\\\]]|\\.)*)" criticality="(\d)"\] /su.exec(
          message,
        );
      assert.ok(match, message);
      assert.equal(Number(match[1]), 16 * 8 + syslogSeverity(record.criticality));
      assert.match(match[3] as string, /^[\x21-\x7e]+$/);
      assert.equal(match[4]?.replace(/\\(.)/gsu, '$1'), record.id);
      assert.equal(match[5]?.replace(/\\(.)/gsu, '$1'), record.sensor);
      assert.ok(message.endsWith(body));
    }),
    { numRuns: 500 },
  );
});

test('CEF: one line, seven header fields and the extension, every value read back', () => {
  fc.assert(
    fc.property(recordArb, (record) => {
      const line = cefMessage(record, record.id, '1.0|x');
      assert.doesNotMatch(line, /[\r\n]/);
      const parts = splitCefHeader(line);
      assert.equal(parts.length, 8);
      const oneLine = (value: string) => value.replace(/\r\n|[\r\n]/g, ' ');
      assert.deepEqual(parts.slice(0, 7), [
        'CEF:0',
        'threatcol',
        'threatcol',
        '1.0|x',
        oneLine(record.threat_id ?? record.threat),
        oneLine(record.threat),
        String(cefSeverity(record.criticality)),
      ]);
      const extension = parseExtension(parts[7] as string);
      if (record.id !== '') assert.equal(extension.get('externalId'), record.id);
      if (record.sensor !== '') assert.equal(extension.get('dvchost'), record.sensor);
      if (record.protocol !== '') assert.equal(extension.get('proto'), record.protocol.toUpperCase());
      // Country and AS of both addresses, in labelled custom fields.
      const r = record as StoredRecord & Record<string, unknown>;
      for (const [key, name] of [
        ['cs2', 'src_country'],
        ['cn1', 'src_asn'],
        ['cs3', 'src_as_org'],
        ['cs4', 'dst_country'],
        ['cn2', 'dst_asn'],
        ['cs5', 'dst_as_org'],
      ] as const) {
        const value = r[name] === undefined || r[name] === '' ? undefined : String(r[name]);
        assert.equal(extension.get(key), value, name);
        assert.equal(extension.get(`${key}Label`), value === undefined ? undefined : name, name);
      }
    }),
    { numRuns: 500 },
  );
});

test('severity mappings: criticality 4 is syslog Critical and CEF 10, 0 is Informational and CEF 1', () => {
  assert.deepEqual([0, 1, 2, 3, 4].map(syslogSeverity), [6, 5, 4, 3, 2]);
  assert.deepEqual([0, 1, 2, 3, 4].map(cefSeverity), [1, 3, 5, 8, 10]);
});
