// The engine's quick read of a canonical IPv4 address agrees with the general unit parser: same bytes, and its
// text plus /32 is the unit's key; anything else (leading zeros, IPv6, garbage) is left to the general parser.
// Read off a stored line's bytes, it answers as on the parsed record's text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatNetwork, unitOf } from '../../src/decisions/networks.js';
import { canonicalIpv4, dstIpv4Of, outputLineOf, srcIpv4Of } from '../../src/store/output-line.js';

/** canonicalIpv4's answer as the bytes or null. */
const quickOf = (address: string): Uint8Array | null => {
  const into = new Uint8Array(4);
  return canonicalIpv4(address, into) ? into : null;
};

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

test('canonicalIpv4: the bytes and key of unitOf for canonical IPv4, null for any other text', () => {
  fc.assert(
    fc.property(text, (address) => {
      const quick = quickOf(address);
      const unit = unitOf(address, 32, 64);
      const canonical = unit !== null && unit.family === 4 && formatNetwork(unit) === `${address}/32`;
      if (canonical) assert.deepEqual(quick, unit.bytes);
      else assert.equal(quick, null, address);
    }),
    { numRuns: 5000 },
  );
  assert.deepEqual(quickOf('198.51.100.7'), Uint8Array.of(198, 51, 100, 7));
  assert.equal(quickOf('198.51.100.07'), null);
  assert.equal(quickOf('198.51.100.256'), null);
});

test('property: an address read off a stored line in the writer form answers as canonicalIpv4 of its text', () => {
  fc.assert(
    fc.property(text, text, fc.nat(3), (src, dst, offset) => {
      const line = JSON.stringify({
        id: '01JDV3Q5W0000000000000000',
        received_at: '2026-11-26T10:00:00.123Z',
        sensor: 'fw1',
        endpoint: 'generic',
        criticality: 3,
        severity: 'high',
        criticality_source: 'severity',
        src_ip: src,
        dst_ip: dst,
        dst_port: 443,
        protocol: 'tcp',
        threat: 'x',
        remote_addr: '127.0.0.1',
        original: {},
      });
      const bytes = Buffer.from(`${'\n'.repeat(offset)}${line}\n`, 'utf8');
      const checked = outputLineOf(bytes, offset, bytes.length - 1, 'head');
      assert.ok(checked !== null, line);
      for (const [read, address] of [
        [srcIpv4Of, src],
        [dstIpv4Of, dst],
      ] as const) {
        const into = new Uint8Array(4);
        const quick = quickOf(address);
        assert.equal(read(checked, into), quick !== null, address);
        if (quick !== null) assert.deepEqual(into, quick);
      }
    }),
    { numRuns: 3000 },
  );
});
