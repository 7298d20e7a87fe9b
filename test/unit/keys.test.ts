import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import test from 'node:test';
import fc from 'fast-check';
import { digestFromHash, digestsEqual, generateKey, hashKey, keyDigest } from '../../src/keys.js';

test('a presented key matches its stored hash, and the digest is the SHA-256 the registry stores', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (key) => {
      const stored = digestFromHash(hashKey(key));
      assert.equal(stored, createHash('sha256').update(key).digest('hex'));
      assert.equal(digestsEqual(keyDigest(key), stored as string), true);
    }),
  );
  const key = generateKey();
  assert.equal(digestsEqual(keyDigest(key), digestFromHash(hashKey(`${key}x`)) as string), false);
});

test('digests compare equal exactly when they are the same string', () => {
  const hex = fc.stringMatching(/^[0-9a-f]{0,70}$/);
  fc.assert(
    fc.property(hex, hex, (a, b) => {
      assert.equal(digestsEqual(a, b), a === b);
      assert.equal(digestsEqual(a, a), true);
    }),
  );
  // One character apart anywhere, first or last: not equal.
  const d = keyDigest('k');
  for (const i of [0, 31, 63]) {
    const other = d.slice(0, i) + (d[i] === '0' ? '1' : '0') + d.slice(i + 1);
    assert.equal(digestsEqual(d, other), false);
  }
  assert.equal(digestFromHash('sha256:XYZ'), null);
});
