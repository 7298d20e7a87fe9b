// The address or CIDR that `threats search --src/--dst` and `source show` match records against: IPv4 patterns
// hold the IPv4-mapped form of their addresses; IPv6 patterns hold IPv4 addresses only inside ::ffff:0:0/96.
import assert from 'node:assert/strict';
import test from 'node:test';
import { parseAddressMatch } from '../../src/store/address-match.js';

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
