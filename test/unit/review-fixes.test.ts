// Unit tests for defects found in review: linear threat-name split, clocks stepping back, address groups.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressGroup } from '../../src/address-group.js';
import { RateLimiter } from '../../src/inputs/https/rate-limit.js';
import { splitThreatName } from '../../src/records/threat-name.js';

test('splitting a threat name is linear: 1 MB of spaces returns at once, unchanged', () => {
  const hostile = `a${' '.repeat(1_000_000)}b`;
  const started = performance.now();
  assert.deepEqual(splitThreatName(hostile), { name: hostile, id: null });
  assert.deepEqual(splitThreatName(`x${' '.repeat(100_000)}(123)`), { name: 'x', id: '123' });
  // Not a speed goal: the quadratic pattern took seconds on a thousandth of this input.
  assert.ok(performance.now() - started < 5000);
  assert.deepEqual(splitThreatName('Name (12) '), { name: 'Name', id: '12' });
  assert.deepEqual(splitThreatName('Name(12a)'), { name: 'Name(12a)', id: null });
  assert.deepEqual(splitThreatName('Name)'), { name: 'Name)', id: null });
});

test('a clock stepped backwards does not drain the rate limiter', () => {
  const limiter = new RateLimiter(10, 1000);
  const t0 = 1_000_000_000;
  assert.equal(limiter.take('s', 500, t0), 0);
  assert.equal(limiter.take('s', 400, t0 - 3_600_000), 0, 'an hour back: the bucket keeps its tokens');
  assert.equal(limiter.take('s', 200, t0 - 3_600_000), 10, 'only what is really missing is waited for');
});

test('address groups: IPv4 as is, IPv4-mapped unwrapped, IPv6 by /64', () => {
  assert.equal(addressGroup('192.0.2.1'), '192.0.2.1');
  assert.equal(addressGroup('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(addressGroup('2001:db8:1:2:a:b:c:d'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('2001:0db8:0001:0002:ffff::9'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('::1'), '0:0:0:0::/64');
  assert.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64');
});
