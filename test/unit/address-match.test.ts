// The address or CIDR that `threats search --src/--dst` and `source show` match records against: IPv4 patterns
// hold the IPv4-mapped form of their addresses; IPv6 patterns hold IPv4 addresses only inside ::ffff:0:0/96.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { canonicalAddress, parseAddressMatch } from '../../src/store/address-match.js';

const matches = (pattern: string, value: string) => {
  const test = parseAddressMatch(pattern);
  assert.ok(test, pattern);
  return test(value);
};

test('an IPv6 network shorter than /96 around :: holds no IPv4 address (::/0 is every IPv6 address, not IPv4 too)', () => {
  for (const pattern of ['::/0', '::/64', '::/80', '::/95'])
    assert.equal(matches(pattern, '8.8.8.8'), false, pattern);
  assert.equal(matches('::/0', '2001:db8::1'), true);
  assert.equal(matches('::/0', '::ffff:8.8.8.8'), true, 'the mapped form is an IPv6 address');
});

test('the IPv4-mapped space holds the IPv4 addresses it maps; IPv4 patterns hold the mapped form', () => {
  assert.equal(matches('::ffff:0:0/96', '8.8.8.8'), true);
  assert.equal(matches('::ffff:8.8.8.0/120', '8.8.8.8'), true);
  assert.equal(matches('::ffff:8.8.8.0/120', '8.8.4.4'), false);
  assert.equal(matches('8.8.8.0/24', '::ffff:8.8.8.8'), true);
  assert.equal(matches('0.0.0.0/0', '2001:db8::1'), false);
});

test('a value with a zone id is matched by its address; what is no address matches nothing', () => {
  assert.equal(matches('fe80::/64', 'fe80::1%eth0'), true);
  assert.equal(matches('::/0', 'not-an-ip'), false);
  assert.equal(matches('0.0.0.0/0', ''), false);
});

/** RFC 5952's text of eight 16-bit groups: lower case, no leading zeros, the longest run of two or more zero groups (the first of equals) as "::". */
function rfc5952(groups: number[]): string {
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best === -1) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}

test('canonicalAddress: one spelling of any IPv6 address, however written; IPv4-mapped ones as IPv4', () => {
  // Groups drawn mostly zero, so runs of zeros (and the ::/96 and ::ffff:0:0/96 spaces) come up often.
  const group = fc.oneof(
    fc.constant(0),
    fc.constant(0),
    fc.constant(0xffff),
    fc.integer({ min: 0, max: 0xffff }),
  );
  fc.assert(
    fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.boolean(), (groups, upper) => {
      const full = groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
      const written = upper ? full.toUpperCase() : full;
      const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
      const want = mapped
        ? [groups[6] as number, groups[7] as number].flatMap((g) => [g >> 8, g & 255]).join('.')
        : rfc5952(groups);
      assert.equal(canonicalAddress(written), want, written);
      assert.equal(canonicalAddress(rfc5952(groups)), want);
      assert.equal(canonicalAddress(`${full}%eth0`), want, 'a zone id is dropped');
    }),
    { numRuns: 2000 },
  );
  for (const text of ['192.0.2.1', 'not an address', '', '1.2.3']) assert.equal(canonicalAddress(text), text);
});
