// Dedupe keys keep their bytes across versions: a stored line's key (written by any earlier build) must equal the
// key a retry computes now, so the key is pinned to its definition, the first 16 bytes of SHA-256 in base64url.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { firewallDedupeKeys, genericDedupeKeys } from '../../src/inputs/https/dedupe-keys.js';
import type { StoredRecord } from '../../src/records/stored-record.js';

const defined = (text: string) =>
  createHash('sha256').update(text).digest().subarray(0, 16).toString('base64url');

test('property: a /firewall key is the first 128 bits of SHA-256 of sensor, endpoint and record, base64url', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 1 }),
      fc.array(fc.jsonValue(), { maxLength: 4 }),
      (sensor, originals) => {
        const records = originals.map((original) => ({ original }) as unknown as StoredRecord);
        const keys = firewallDedupeKeys(sensor, records);
        assert.deepEqual(
          keys,
          originals.map((o) => defined(`firewall\0${sensor}\0${JSON.stringify(o)}`)),
        );
      },
    ),
    { seed: 30, numRuns: 500 },
  );
});

test('property: a /generic key is the same digest of sensor, Idempotency-Key and position', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.nat(5), (sensor, key, count) => {
      const expected = Array.from({ length: count }, (_, i) => defined(`generic\0${sensor}\0${key}\0${i}`));
      assert.deepEqual(genericDedupeKeys(sensor, count, key), expected);
    }),
    { seed: 31, numRuns: 300 },
  );
});
