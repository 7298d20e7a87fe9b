// The rest check's four-bytes-at-a-time scan of strings (store/record-rest.ts) over the buffers feeds really hand
// it: views that start at any byte of their ArrayBuffer (pool slices), several views of one memory read in turn,
// and bytes past the line's end that would stop a scan. Each answer is the parse's.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { newRecordId } from '../../src/records/record-id.js';
import { engineFieldsOf, outputLineOf } from '../../src/store/output-line.js';
import { parseStoredRecord } from '../../src/store/record-shape.js';

/** A stored line of the writer's form whose threat and original's message are `@@`. */
const TEMPLATE =
  `{"id":"${newRecordId()}","received_at":"2026-11-26T10:00:00.123Z","sensor":"fw1","endpoint":"generic",` +
  '"criticality":3,"severity":"high","criticality_source":"severity","src_ip":"192.0.2.1",' +
  '"dst_ip":"198.51.100.7","src_port":51234,"dst_port":443,"protocol":"tcp","threat":"@@",' +
  '"remote_addr":"127.0.0.1","original":{"message":"@@"}}';

/** The line with `value`'s bytes as they are (a quote or a control byte unescaped too) in both places. */
function lineWith(value: Buffer): Buffer {
  const [a, b, c] = TEMPLATE.split('@@') as [string, string, string];
  return Buffer.concat([Buffer.from(a), value, Buffer.from(b), value, Buffer.from(c)]);
}

/** The bytes a string's scan treats apart (stops, escapes' letters, UTF-8's high bytes) and plain ones. */
const byte = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(0x61, 0x20, 0x7e, 0x30) },
  { weight: 2, arbitrary: fc.constantFrom(0x22, 0x5c, 0x00, 0x01, 0x1f, 0x0a, 0x7f, 0x75) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xff }) },
);

/**
 * The feed's answer for `buf[start, stop)` against the parse of `line`: the same refusal, and every line of the
 * writer's form the parse accepts is checked off its bytes (a wrong scan that gives up sends a good line to the
 * parse, which would hide it), its addresses and threat read there as the parse reads them.
 */
function agrees(buf: Buffer, start: number, stop: number, line: Buffer): void {
  const text = line.toString('utf8');
  const record = parseStoredRecord(text);
  const checked = outputLineOf(buf, start, stop, 'head');
  assert.equal(checked === null, record === null, line.toString('latin1'));
  if (checked === null || record === null) return;
  // A line checked off its bytes is its own head (MarkedOutputLine); a parsed one has its record as head.
  assert.equal((checked.head as unknown) === checked, true, `not checked off its bytes: ${text}`);
  const fields = engineFieldsOf(checked);
  assert.deepEqual(
    [fields.src_ip, fields.dst_ip, fields.threat()],
    [record.src_ip, record.dst_ip, record.threat],
  );
}

/** `bytes` copied into a fresh ArrayBuffer at `offset`, after `before` filler bytes, `after` behind: a view of it. */
function placed(bytes: Buffer, offset: number, before: number, after: number, fill: number): Buffer {
  const memory = Buffer.alloc(offset + before + bytes.length + after, fill);
  bytes.copy(memory, offset + before);
  return Buffer.from(memory.buffer, offset, before + bytes.length + after);
}

test('property: the words scan answers as the parse at any byteOffset of the memory, with stop bytes past the line', () => {
  fc.assert(
    fc.property(
      fc
        .uint8Array({ minLength: 0, maxLength: 48 })
        .chain((plain) => fc.tuple(fc.constant(plain), fc.array(byte, { minLength: 0, maxLength: 6 }))),
      fc.nat(40),
      fc.nat(3),
      fc.nat(7),
      fc.constantFrom(0x22, 0x5c, 0x00, 0x61),
      ([plain, marks], at, offset, before, fill) => {
        // A long plain run (printable ASCII) with the marks put in at `at`.
        const run = Buffer.from(plain)
          .map((b) => 0x21 + (b % 0x3b))
          .filter((b) => b !== 0x22 && b !== 0x5c);
        const cut = Math.min(at, run.length);
        const value = Buffer.concat([run.subarray(0, cut), Buffer.from(marks), run.subarray(cut)]);
        const bytes = lineWith(value);
        agrees(placed(bytes, offset, before, 5, fill), before, before + bytes.length, bytes);
      },
    ),
    { numRuns: 4000 },
  );
});

test('property: views of one memory read in turn (each its own words): every answer is its own line', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.array(byte, { minLength: 0, maxLength: 12 }), fc.nat(3)), {
        minLength: 2,
        maxLength: 6,
      }),
      (parts) => {
        // One ArrayBuffer holding every line, each read through a view of its own starting at its own offset,
        // then all of them again in the other order.
        const lines = parts.map(([marks]) =>
          lineWith(Buffer.concat([Buffer.from('abcdefghij'), Buffer.from(marks), Buffer.from('klmnop')])),
        );
        const size = lines.reduce((n, l) => n + l.length + 8, 0);
        const memory = Buffer.alloc(size, 0x22);
        const views: { buf: Buffer; line: Buffer }[] = [];
        let at = 0;
        lines.forEach((line, i) => {
          at += (parts[i] as [number[], number])[1];
          line.copy(memory, at);
          views.push({ buf: Buffer.from(memory.buffer, at, line.length), line });
          at += line.length + 4;
        });
        for (const { buf, line } of [...views, ...views.reverse()]) agrees(buf, 0, buf.length, line);
      },
    ),
    { numRuns: 1500 },
  );
});
