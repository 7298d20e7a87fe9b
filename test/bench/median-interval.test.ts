// The interval figure 18 prints beside its ratio (report.ts medianInterval): the order statistics a binomial
// count gives, checked against the counts themselves in whole numbers, and around the median of any values.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { median, medianInterval } from './report.js';

/** 2^n P(at most j of n values below the median): C(n, 0) + ... + C(n, j), exact. */
function countsUpTo(n: number, j: number): bigint {
  let c = 1n;
  let sum = 1n;
  for (let i = 1; i <= j; i++) {
    c = (c * BigInt(n - i + 1)) / BigInt(i);
    sum += c;
  }
  return sum;
}

test('the interval is the widest pair of order statistics whose miss chance is within what was asked', () => {
  for (const n of [5, 6, 8, 12, 16, 24, 40]) {
    for (const asked of [0.9, 0.95]) {
      const got = medianInterval(
        Array.from({ length: n }, (_, i) => i + 1),
        asked,
      );
      // The k-th from each end, k the largest with 2^n P(below <= k - 1) <= 2^n (1 - asked) / 2.
      let k = 0;
      while (k < n && Number(countsUpTo(n, k)) <= ((1 - asked) / 2) * 2 ** n) k++;
      if (k === 0) {
        assert.equal(got, null, `n ${n}, asked ${asked}`);
        continue;
      }
      assert.ok(got, `n ${n}, asked ${asked}`);
      assert.equal(got.low, k, `n ${n}, asked ${asked}`);
      assert.equal(got.high, n - k + 1, `n ${n}, asked ${asked}`);
      assert.ok(Math.abs(got.confidence - (1 - (2 * Number(countsUpTo(n, k - 1))) / 2 ** n)) < 1e-12);
      assert.ok(got.confidence >= asked);
    }
  }
  assert.equal(medianInterval(Array.from({ length: 1001 }, (_, i) => i)), null);
  assert.deepEqual(medianInterval([Number.NaN, 0.9, 0.95, 1, 1.05, 1.1, 1.15, 1.2, 1.25], 0.9), {
    low: 0.95,
    high: 1.2,
    confidence: 1 - 18 / 256,
  });
});

test("the interval holds the values' median, between two of the values, in any order", () => {
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0.5, max: 1.5, noNaN: true }), { minLength: 6, maxLength: 40 }),
      (values) => {
        const got = medianInterval(values);
        assert.ok(got);
        assert.ok(values.includes(got.low) && values.includes(got.high));
        assert.ok(got.low <= median(values) && median(values) <= got.high);
        assert.deepEqual(medianInterval([...values].reverse()), got);
      },
    ),
  );
});
