// The head read off a stored line (store/record-head.ts) never disagrees with parsing the line whole: the same
// fields where both give one, none where the parse refuses a well-formed line, and none for lines not in the
// writer's form (those are parsed whole by the feeds).
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { loadConfig } from '../../src/config/load-config.js';
import { newRecordId } from '../../src/records/record-id.js';
import { storedLine } from '../../src/records/stored-line.js';
import {
  buildFirewallRecord,
  buildGenericRecord,
  buildSyslogRecord,
} from '../../src/records/stored-record.js';
import { outputLineOf, receivedAtMsOf } from '../../src/store/output-line.js';
import { markRecordHead } from '../../src/store/record-head.js';
import { parseStoredRecord } from '../../src/store/record-shape.js';
import type { RecordHead } from '../../src/store/store.js';
import { firewallRecord, genericRecord } from '../helpers/records.js';

const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir: '/tmp' } });

const tricky = fc.constantFrom('a', 'é', '😀', '"', '\\', '\u0000', '\u001f', '\u2028', ' ', '.');
const name = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9._-]{0,20}$/),
  fc.string({ unit: tricky, minLength: 0, maxLength: 8 }),
  fc.string({ unit: 'binary', minLength: 0, maxLength: 12 }),
);
const criticality = fc.oneof(
  fc.integer({ min: 0, max: 4 }),
  fc.integer({ min: -2, max: 12 }),
  fc.constantFrom(2.5, 1, -0),
);
const time = fc.oneof(
  fc
    .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom('', 'yesterday', '2026-13-40T00:00:00.000Z'),
  // Before 1970, another form Date.parse reads, the largest and smallest times it gives (past an int32 of hours).
  fc.constantFrom(
    '1969-12-31T23:59:59.999Z',
    '2026-11-26T10:00:00Z',
    '+275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
  ),
);

/** What a stored record holds after its head, but `original` (record-shape.ts checks it whole). */
const REST = {
  severity: 'high',
  criticality_source: 'severity',
  src_ip: '192.0.2.1',
  dst_ip: '198.51.100.7',
  src_port: 51234,
  dst_port: 443,
  protocol: 'tcp',
  threat: 'EICAR',
  remote_addr: '127.0.0.1',
};

/** A record's line in the writer's field order, with whatever values (JSON.stringify: always valid JSON). */
const line = fc
  .record({
    id: fc.oneof(fc.constant(newRecordId()), name),
    received_at: time,
    sensor: name,
    endpoint: fc.constantFrom('firewall', 'generic', 'syslog', 'other'),
    format: fc.option(name, { nil: undefined }),
    criticality,
    original: fc.jsonValue({ maxDepth: 2 }),
  })
  .map((r) =>
    JSON.stringify({
      id: r.id,
      received_at: r.received_at,
      sensor: r.sensor,
      endpoint: r.endpoint,
      ...(r.format === undefined ? {} : { format: r.format }),
      criticality: r.criticality,
      ...REST,
      original:
        r.endpoint === 'syslog' && typeof r.original !== 'string' ? JSON.stringify(r.original) : r.original,
    }),
  );

/** A head's five fields as a plain object (a checked line is its own head, read through getters). */
const headFields = (h: RecordHead) => ({
  id: h.id,
  received_at: h.received_at,
  sensor: h.sensor,
  endpoint: h.endpoint,
  criticality: h.criticality,
});

/** The head a feed reads off the line where it lies in a larger chunk of the segment, or null (parsed whole). */
const headOf = (text: string) => {
  const buf = Buffer.from(`pad\n${text}\nmore`, 'utf8');
  const stop = buf.length - 5;
  if (!markRecordHead(buf, 4, stop)) return null;
  const line = outputLineOf(buf, 4, stop, 'head');
  return line === null ? null : headFields(line.head);
};

function agrees(text: string): void {
  const head = headOf(text);
  const record = parseStoredRecord(text);
  if (head === null) return;
  // A head is only read where the whole line is a record too.
  assert.ok(record !== null, text);
  assert.deepEqual(head, {
    id: record.id,
    received_at: record.received_at,
    sensor: record.sensor,
    endpoint: record.endpoint,
    criticality: record.criticality,
  });
}

test('property: a well-formed line has a head only when it is a record, with the parsed fields', () => {
  fc.assert(
    fc.property(line, (text) => {
      const head = headOf(text);
      const record = parseStoredRecord(text);
      if (record === null) assert.equal(head, null, text);
      agrees(text);
    }),
    { numRuns: 2000 },
  );
});

test('property: damaged lines never give a head that disagrees with their parse', () => {
  fc.assert(
    fc.property(line, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean(), (text, at, byte, cut) => {
      const buf = Buffer.from(text, 'utf8');
      const i = at % buf.length;
      const damaged = cut
        ? buf.subarray(0, i)
        : Buffer.concat([buf.subarray(0, i), Buffer.of(byte), buf.subarray(i + 1)]);
      agrees(damaged.toString('utf8'));
    }),
    { numRuns: 2000 },
  );
});

test('property: a line checked in place inside its chunk reads as the same head, bytes, text and record', () => {
  fc.assert(
    // What follows the line in the chunk (a NUL, another line's start) is not part of it.
    fc.property(line, fc.constantFrom('', 'x\u0000\n', '{"id":"', '}'), (text, after) => {
      const buf = Buffer.from(`pad\n${text}\n${after}`, 'utf8');
      const stop = 4 + Buffer.byteLength(text);
      const checked = outputLineOf(buf, 4, stop, 'head');
      const parsed = outputLineOf(buf, 4, stop, 'record');
      if (parsed === null) return assert.equal(checked, null, text);
      assert.ok(checked !== null, text);
      assert.equal(checked.line, text);
      assert.deepEqual(checked.bytes, Buffer.from(text, 'utf8'));
      assert.equal(checked.id, parsed.id);
      assert.deepEqual(headFields(checked.head), headFields(parsed.head));
      assert.deepEqual(checked.record, parsed.record);
      // The time as the check read it, kept by the line: Date.parse's answer.
      assert.equal(receivedAtMsOf(checked), Date.parse(parsed.head.received_at), text);
    }),
    { numRuns: 2000 },
  );
});

test("a writer's line gives its head; other forms, escapes, zeros and criticalities out of range give none", () => {
  const id = newRecordId();
  const base = {
    id,
    received_at: '2026-11-26T10:00:00.123Z',
    sensor: 'fw1',
    endpoint: 'firewall',
    criticality: 4,
    ...REST,
    severity: 'critical',
    original: { threat: 'x'.repeat(40) },
  };
  assert.deepEqual(headOf(JSON.stringify(base)), {
    id,
    received_at: '2026-11-26T10:00:00.123Z',
    sensor: 'fw1',
    endpoint: 'firewall',
    criticality: 4,
  });
  assert.equal(
    headOf(JSON.stringify({ ...base, endpoint: 'syslog', format: 'cef', original: 'CEF:0|x' }))?.criticality,
    4,
  );
  const { id: _, ...rest } = base;
  assert.equal(headOf(JSON.stringify({ ...rest, id })), null, 'id not first: parsed whole instead');
  assert.equal(headOf(JSON.stringify({ ...base, sensor: 'f"w' })), null);
  assert.equal(headOf(JSON.stringify({ ...base, criticality: 5 })), null);
  assert.equal(headOf(JSON.stringify(base).replace('"criticality":4', '"criticality":4.0')), null);
  assert.equal(headOf(JSON.stringify(base).replace('xxxx', 'x\u0000\u0000x')), null);
  assert.equal(headOf(JSON.stringify(base).slice(0, -2)), null, 'not ended by a closing brace');
  // A writer's head, then not exactly one whole record: the head alone never lets a line through.
  const { threat: _t, ...cut } = base;
  assert.equal(headOf(JSON.stringify(cut)), null, 'no threat');
  assert.equal(headOf(JSON.stringify({ ...base, threat: 5 })), null, 'a threat that is no string');
  for (const glue of ['', ',', '\n', ' ']) {
    const two = `${JSON.stringify(base)}${glue}${JSON.stringify({ ...base, threat: 'forged' })}`;
    assert.equal(headOf(two), null, `two objects joined by ${JSON.stringify(glue)}`);
  }
});

/** Any JSON value or a value of the right type, for a field of the writer's form. */
const loose = <T>(typed: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 40, arbitrary: typed }, fc.jsonValue({ maxDepth: 2 }));
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });
const portValue = fc.oneof(
  { weight: 20, arbitrary: fc.integer({ min: 0, max: 65535 }) },
  fc.constantFrom(65536, -1, 80.5, 1e3, '22'),
);

/** A line in the writer's field order whose rest has any values, each field present or not where it may be. */
const writerLine = fc
  .record({
    endpoint: fc.constantFrom('firewall', 'generic', 'syslog'),
    format: maybe(loose(name)),
    criticality: fc.integer({ min: 0, max: 4 }),
    severity: loose(name),
    criticality_source: loose(name),
    src_ip: loose(name),
    dst_ip: loose(name),
    src_port: maybe(portValue),
    dst_port: portValue,
    protocol: loose(name),
    threat: loose(fc.string({ unit: tricky, maxLength: 12 })),
    threat_id: maybe(loose(name)),
    detected_at: maybe(loose(name)),
    remote_addr: loose(name),
    original: fc.jsonValue({ maxDepth: 4 }),
    object: fc.dictionary(fc.string({ unit: tricky }), fc.jsonValue({ maxDepth: 3 })),
    message: fc.string({ unit: tricky }),
    repaired: maybe(fc.constantFrom(true, true, false, 1)),
    truncated: maybe(fc.constantFrom(true, true, 'x')),
    other: maybe(fc.constantFrom(true, true, null)),
    dedupe_key: maybe(loose(name)),
    // Most lines keep what their endpoint has (format and message text, or the object); the others not.
    consistent: fc.nat(9).map((n) => n < 9),
  })
  .map(({ object, message, consistent, ...r }) => {
    const syslog = r.endpoint === 'syslog';
    const fields = consistent
      ? { ...r, format: syslog ? (r.format ?? 'cef') : undefined, original: syslog ? message : object }
      : r;
    return JSON.stringify({
      id: newRecordId(),
      received_at: '2026-11-26T10:00:00.123Z',
      sensor: 'fw1',
      ...fields,
    });
  });

/** The line as an output's feed hands it over with `check: 'head'`, and whether its bytes alone were checked. */
function checkedByBytes(text: string) {
  const buf = Buffer.from(`pad\n${text}\n{"id":"next"}`, 'utf8');
  const stop = 4 + Buffer.byteLength(text);
  const line = outputLineOf(buf, 4, stop, 'head');
  // A line checked off its bytes is its own head (MarkedOutputLine); a parsed one has its record as head.
  return { line, byBytes: line !== null && (line.head as unknown) === line };
}

test('property: a line checked off its bytes is one the parse and shape check pass, with the same record', () => {
  let byBytesCount = 0;
  const agree = (text: string) => {
    const { line, byBytes } = checkedByBytes(text);
    const record = parseStoredRecord(text);
    assert.equal(line === null, record === null, text);
    if (!byBytes) return;
    byBytesCount++;
    assert.ok(record !== null && line !== null, text);
    assert.deepEqual(line.record, record);
    assert.deepEqual(headFields(line.head), headFields(record));
  };
  fc.assert(fc.property(writerLine, agree), { numRuns: 3000 });
  // Not vacuous: most whole lines of the writer's form are checked by their bytes.
  assert.ok(byBytesCount > 600, `${byBytesCount} of 3000 checked off their bytes`);
  // Damaged: a byte changed, inserted or cut; a second object after the first.
  fc.assert(
    fc.property(
      writerLine,
      fc.nat(),
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom('set', 'insert', 'cut'),
      (text, at, byte, how) => {
        const buf = Buffer.from(text, 'utf8');
        const i = at % buf.length;
        const b = Buffer.of(byte);
        const parts =
          how === 'set'
            ? [buf.subarray(0, i), b, buf.subarray(i + 1)]
            : how === 'insert'
              ? [buf.subarray(0, i), b, buf.subarray(i)]
              : [buf.subarray(0, i)];
        agree(Buffer.concat(parts).toString('utf8'));
      },
    ),
    { numRuns: 3000 },
  );
  fc.assert(
    fc.property(writerLine, writerLine, fc.constantFrom('', ',', '\n', ' '), (a, b, glue) => {
      agree(`${a}${glue}${b}`);
    }),
    { numRuns: 500 },
  );
});

test('property: long strings are checked four bytes at a time: a stop byte anywhere, at any alignment, is found', () => {
  // A string's bytes are looked at as 32-bit words (record-rest.ts): a quote, a backslash or a control byte at any
  // place in a long value, with the line at any offset of its buffer's memory, must still answer as the parse.
  const special = fc.constantFrom('"', '\\', '\u0000', '\u0001', '\u001f', '\n', 'é', '\u007f', '\\u00e9');
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '~', 'é'), minLength: 0, maxLength: 40 }),
      special,
      fc.string({ unit: fc.constantFrom('b', '9', '😀'), minLength: 0, maxLength: 40 }),
      fc.nat(7),
      fc.boolean(),
      (before, mark, after, offset, raw) => {
        const value = `${before}${mark}${after}`;
        const text = JSON.stringify({
          id: newRecordId(),
          received_at: '2026-11-26T10:00:00.123Z',
          sensor: 'fw1',
          endpoint: 'generic',
          criticality: 3,
          ...REST,
          threat: value,
          original: { message: value },
        });
        // raw: the mark's bytes as they are, where JSON.stringify escaped them (a line only a damaged file holds).
        const line = raw ? text.replaceAll(JSON.stringify(mark).slice(1, -1), mark) : text;
        const bytes = Buffer.from(line, 'utf8');
        const memory = Buffer.alloc(bytes.length + 16, 0x61);
        bytes.copy(memory, offset);
        const record = parseStoredRecord(line);
        const checked = outputLineOf(memory, offset, offset + bytes.length, 'head');
        assert.equal(checked === null, record === null, line);
        if (checked !== null) assert.deepEqual(checked.record, record);
      },
    ),
    { numRuns: 3000 },
  );
});

test("the collector's own lines of every endpoint are checked off their bytes (the parse is for other forms)", () => {
  const ctx = {
    id: newRecordId,
    receivedAt: '2026-11-26T10:00:00.123Z',
    sensor: 'fw-é',
    remoteAddr: '::1',
    timezone: 'Europe/Berlin',
    repaired: true,
    rules: config.firewall,
    ascii: false,
    plainStrings: false,
  };
  const firewall = buildFirewallRecord(
    firewallRecord({ threat_name: 'a "b" \\ c\u0001(123)', sport: '0' }) as never,
    ctx,
  );
  firewall.dedupe_key = 'Qm9vbGVhbnNBcmVGdW4xMg';
  firewall.keepSentText('{ "a" : [ 1e-3 , -0.5E+2, "\\u00e9\\n" ] , "b":{}, "c":[] }', false);
  const generic = buildGenericRecord(genericRecord() as never, { ...ctx, repaired: false });
  const threat = {
    criticality: 0,
    criticality_source: 'default' as const,
    src_ip: '',
    dst_ip: '',
    dst_port: 0,
    protocol: '',
    threat: 'x',
  };
  const syslog = buildSyslogRecord(threat, 'cef', 'CEF:0|a "b" \\ c\t', true, ctx);
  syslog.other = true;
  for (const record of [firewall, generic, syslog]) {
    const text = storedLine(record);
    assert.ok(parseStoredRecord(text), text);
    assert.equal(checkedByBytes(text).byBytes, true, text);
  }
});

test('a writer-form line whose original is not JSON is refused whichever way it is checked', () => {
  const good = JSON.stringify({
    id: newRecordId(),
    received_at: '2026-11-26T10:00:00.123Z',
    sensor: 'fw1',
    endpoint: 'generic',
    criticality: 1,
    ...REST,
    original: { a: 0 },
  });
  assert.equal(checkedByBytes(good).byBytes, true);
  const bad = [
    '01',
    '1.',
    '.5',
    '1e',
    '1e+',
    '-',
    '1x5',
    '0x1',
    'tru',
    'nul',
    'True',
    '{"b":1,}',
    '[1,]',
    '[1 2]',
    '"\u0001"',
    '"\\x"',
    '"\\u12g4"',
    '{"b"}',
    '{1:2}',
    "'s'",
    'NaN',
    'Infinity',
    '1ex',
  ];
  for (const value of bad) {
    const text = good.replace('{"a":0}', `{"a":${value}}`);
    assert.equal(checkedByBytes(text).line, null, value);
  }
  for (const value of ['-0', '0.5e-3', '1E+2', '[]', '[[{}]]', '"\\u00e9\\/"', ' true ', '{ }']) {
    assert.equal(checkedByBytes(good.replace('{"a":0}', `{"a":${value}}`)).byBytes, true, value);
  }
});
