// The memoised ISO formatter: every instant, repeated or not, in any order, formats as Date#toISOString does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { memoIsoTime } from '../../src/records/iso-time.js';

test('property: memoIsoTime() gives new Date(ms).toISOString() for any sequence of instants, repeats included', () => {
  const instant = fc.integer({ min: 0, max: 4102444800000 });
  fc.assert(
    fc.property(fc.array(fc.oneof(instant, fc.constant(1795600000000)), { maxLength: 30 }), (times) => {
      const iso = memoIsoTime();
      const other = memoIsoTime();
      for (const ms of times) {
        assert.equal(iso(ms), new Date(ms).toISOString());
        // A second formatter keeps its own memo: formatting elsewhere never changes this one's answers.
        assert.equal(other(ms + 1000), new Date(ms + 1000).toISOString());
      }
    }),
    { seed: 13 },
  );
});

test('property: instants clustered in a few seconds (the memo of the second is read) format as toISOString does', () => {
  const base = fc.constantFrom(0, 1795600000000, 253402300799000, 4102444799000);
  fc.assert(
    fc.property(base, fc.array(fc.integer({ min: -1500, max: 2500 }), { maxLength: 40 }), (at, offsets) => {
      const iso = memoIsoTime();
      for (const offset of offsets) {
        const ms = Math.max(0, at + offset);
        assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
      }
    }),
    { seed: 14 },
  );
});
