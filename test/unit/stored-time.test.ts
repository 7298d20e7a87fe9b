// A stored time read off a line's bytes (store/stored-time.ts) is what Date.parse gives for the same text: the
// writer's form counted from its digits, anything else (other forms, fields out of range, damage) as parsed.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { inWriterForm, isoText, isoTimeMs } from '../../src/store/stored-time.js';

/**
 * isoTimeMs of `text` where it lies inside a larger buffer, against Date.parse of the text; and a text
 * inWriterForm takes is the very text of the time Date.parse reads (so such texts sort as their times).
 */
function agrees(text: string): void {
  const buf = Buffer.from(`x"${text}"y`, 'latin1');
  assert.ok(Object.is(isoTimeMs(buf, 2, buf.length - 2), Date.parse(text)), text);
  if (inWriterForm(text)) assert.equal(new Date(Date.parse(text)).toISOString(), text);
}

const writerTime = fc
  .date({
    min: new Date('0000-01-01T00:00:00.000Z'),
    max: new Date('9999-12-31T23:59:59.999Z'),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());

test('property: a time in the writer form reads as Date.parse reads it, across all four-digit years', () => {
  fc.assert(
    fc.property(writerTime, (text) => {
      agrees(text);
      assert.ok(inWriterForm(text), text);
    }),
    { numRuns: 20_000 },
  );
});

test('property: times read one after the other, most in the same hour as the one before, damaged or not, read as Date.parse reads each', () => {
  const step = fc.record({
    ms: fc.integer({ min: 0, max: 3 * 3_600_000 }),
    damage: fc.option(fc.tuple(fc.nat(23), fc.integer({ min: 0x20, max: 0xff }))),
  });
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 253_402_289_999_999 }),
      fc.array(step, { maxLength: 30 }),
      (base, steps) => {
        for (const { ms, damage } of steps) {
          const text = new Date(base + ms).toISOString();
          agrees(
            damage
              ? `${text.slice(0, damage[0])}${String.fromCharCode(damage[1])}${text.slice(damage[0] + 1)}`
              : text,
          );
        }
      },
    ),
    { numRuns: 3000 },
  );
});

test('property: a damaged or other-form time reads as Date.parse reads it (NaN where it refuses)', () => {
  fc.assert(
    fc.property(writerTime, fc.nat(23), fc.integer({ min: 0x20, max: 0xff }), (text, at, byte) => {
      agrees(`${text.slice(0, at)}${String.fromCharCode(byte)}${text.slice(at + 1)}`);
    }),
    { numRuns: 20_000 },
  );
  // Every field at and past its range's edges, leap days, and the forms Date.parse takes besides the writer's.
  for (const text of [
    '2024-02-29T00:00:00.000Z',
    '2023-02-29T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2000-02-29T23:59:59.999Z',
    '2026-11-28T24:00:00.000Z',
    '2026-11-28T23:60:00.000Z',
    '2026-11-28T23:59:60.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-00-01T00:00:00.000Z',
    '2026-11-00T00:00:00.000Z',
    '2026-04-31T00:00:00.000Z',
    '0000-01-01T00:00:00.000Z',
    '0099-12-31T00:00:00.000Z',
    '9999-12-31T23:59:59.999Z',
    '2026-11-28T10:00:00Z',
    '2026-11-28T10:00:00.000+01:00',
    '+002026-11-28T10:00:00.000Z',
    '2026-11-28',
    'Sat, 28 Nov 2026 10:00:00 GMT',
    '',
    'yesterday',
  ])
    agrees(text);
});

test('property: isoText writes what toISOString writes, across all four-digit years and past them', () => {
  const ms = fc.oneof(
    fc.integer({ min: Date.parse('0000-01-01T00:00:00.000Z'), max: Date.parse('9999-12-31T23:59:59.999Z') }),
    fc.integer({ min: -8.64e15, max: 8.64e15 }),
    fc.constantFrom(0, -1, 253_402_300_799_999, 253_402_300_800_000, Date.parse('2024-02-29T23:59:59.999Z')),
    fc.double({ min: -1e13, max: 1e13, noNaN: true }),
  );
  fc.assert(
    fc.property(ms, (at) => assert.equal(isoText(at), new Date(at).toISOString(), String(at))),
    { numRuns: 20_000 },
  );
  assert.throws(() => isoText(Number.NaN), RangeError);
});
