// The engine's quick read of a canonical IPv4 address agrees with the general unit parser: same bytes, and its
// text plus /32 is the unit's key; anything else (leading zeros, IPv6, garbage) is left to the general parser.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { canonicalIpv4 } from '../../src/decisions/engine.js';
import { formatNetwork, unitOf } from '../../src/decisions/networks.js';

test('canonicalIpv4: the bytes and key of unitOf for canonical IPv4, null for any other text', () => {
  const text = fc.oneof(
    fc.ipV4(),
    fc.ipV4Extended(),
    fc.ipV6(),
    fc.string({ maxLength: 16 }),
    fc
      .array(fc.oneof(fc.nat(300).map(String), fc.constantFrom('00', '01', '', ' 1', '1a')), {
        minLength: 1,
        maxLength: 5,
      })
      .map((parts) => parts.join('.')),
  );
  fc.assert(
    fc.property(text, (address) => {
      const quick = canonicalIpv4(address);
      const unit = unitOf(address, 32, 64);
      const canonical = unit !== null && unit.family === 4 && formatNetwork(unit) === `${address}/32`;
      if (canonical) assert.deepEqual(quick, unit.bytes);
      else assert.equal(quick, null, address);
    }),
    { numRuns: 5000 },
  );
  assert.deepEqual(canonicalIpv4('198.51.100.7'), Uint8Array.of(198, 51, 100, 7));
  assert.equal(canonicalIpv4('198.51.100.07'), null);
  assert.equal(canonicalIpv4('198.51.100.256'), null);
});
