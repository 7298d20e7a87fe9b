// The decisions' address handling: block units (IPv4 /32, IPv6 /64), canonical text, the ranges never blocked
// by default, overlap with allow entries; and the per-address tracker's bound.
import assert from 'node:assert/strict';
import { isIPv6 } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { maskBytes } from '../../src/config/blocklist-schema.js';
import { AddressTracker } from '../../src/decisions/address-tracker.js';
import {
  formatAddress,
  formatNetwork,
  isPrivate,
  listEntry,
  overlaps,
  parseNetwork,
  unitOf,
} from '../../src/decisions/networks.js';
import { compileRules } from '../../src/decisions/rules.js';

const unit = (address: string, v4 = 32, v6 = 64) => {
  const n = unitOf(address, v4, v6);
  return n ? formatNetwork(n) : null;
};

test('unitOf: IPv4 by address, IPv6 by /64, mapped IPv4 as IPv4, anything else null', () => {
  assert.equal(unit('198.51.100.7'), '198.51.100.7/32');
  assert.equal(unit('198.51.100.7', 24), '198.51.100.0/24');
  assert.equal(unit('2001:db8:aa:bb:1:2:3:4'), '2001:db8:aa:bb::/64');
  assert.equal(unit('2001:DB8:AA:BB::'), '2001:db8:aa:bb::/64');
  assert.equal(unit('2001:db8::1', 32, 128), '2001:db8::1/128');
  assert.equal(unit('::ffff:192.0.2.1'), '192.0.2.1/32');
  // NAT64's well-known prefix holds an IPv4 address in its last 32 bits: a /64 would be all of them.
  assert.equal(unit('64:ff9b::192.0.2.1'), '64:ff9b::c000:201/128');
  assert.equal(unit('64:ff9b::192.0.2.1', 24), '64:ff9b::c000:200/120');
  assert.equal(unit('64:ff9b:1::1'), '64:ff9b:1::/64');
  for (const bad of ['', 'unknown', '192.0.2.0/24', '300.1.1.1', 'fe80::1%eth0'])
    assert.equal(unit(bad), null, bad);
});

test('formatAddress: the shortest IPv6 form (RFC 5952), which Node reads back as the same address', () => {
  assert.equal(formatAddress(parseNetwork('2001:db8:0:0:1:0:0:1') as never), '2001:db8::1:0:0:1');
  assert.equal(formatAddress(parseNetwork('::') as never), '::');
  assert.equal(formatAddress(parseNetwork('::1') as never), '::1');
  assert.equal(formatAddress(parseNetwork('2001:db8:1:1:1:1:1:0') as never), '2001:db8:1:1:1:1:1:0');
  fc.assert(
    fc.property(fc.ipV6(), (address) => {
      const n = parseNetwork(address);
      if (n === null) return false;
      const text = formatAddress(n);
      const back = parseNetwork(text);
      // The same bytes, and the same text as the URL parser's canonical form (RFC 5952).
      const same = back?.bytes.every((b, i) => b === n.bytes[i]) === true;
      return isIPv6(text) && same && new URL(`http://[${text}]/`).hostname === `[${text}]`;
    }),
  );
});

test('isPrivate: private, loopback, link-local, ULA, shared, multicast, unspecified; documentation ranges are public', () => {
  for (const a of [
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '127.0.0.1',
    '169.254.1.1',
    '100.64.0.1',
    '224.0.0.1',
    '0.0.0.0',
    '::',
    '::1',
    'fd00::1',
    'fe80::1',
    'ff02::1',
    '172.31.255.255',
    '100.127.0.1',
    'febf::1',
    'fc00::1',
    '255.255.255.255',
    // NAT64's names for private IPv4 addresses (RFC 6052 forbids them there).
    '64:ff9b::10.0.0.1',
    '64:ff9b::192.168.1.1',
    '64:ff9b::7f00:1',
  ]) {
    assert.equal(isPrivate(unitOf(a, 32, 64) as never), true, a);
  }
  for (const a of [
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.1',
    '2001:db8::1',
    '8.8.8.8',
    '100.128.0.1',
    '172.32.0.1',
    '100.63.255.255',
    'fec0::1',
    'fbff::1',
    '223.255.255.255',
    '64:ff9b::198.51.100.1',
    '64:ff9b::8.8.8.8',
    '64:ff9b:1::10.0.0.1',
  ]) {
    assert.equal(isPrivate(unitOf(a, 32, 64) as never), false, a);
  }
});

test('isPrivate: a unit wider than its address is never blocked when it holds such a range', () => {
  assert.equal(isPrivate(unitOf('172.1.2.3', 8, 64) as never), true, '172.0.0.0/8 holds 172.16/12');
  assert.equal(isPrivate(unitOf('100.1.2.3', 8, 64) as never), true, '100.0.0.0/8 holds 100.64/10');
  assert.equal(isPrivate(unitOf('11.1.2.3', 8, 64) as never), false);
  assert.equal(isPrivate(unitOf('100.128.2.3', 16, 64) as never), false);
  assert.equal(isPrivate(unitOf('64:ff9b::172.1.2.3', 8, 64) as never), true, 'NAT64 of 172.0.0.0/8');
  assert.equal(isPrivate(unitOf('64:ff9b::11.1.2.3', 8, 64) as never), false);
  assert.equal(
    isPrivate(parseNetwork('64:ff9b::/96') as never),
    true,
    'every IPv4 address behind a translator',
  );
  assert.equal(isPrivate(parseNetwork('64:ff9b::/64') as never), true);
  // Wider networks that hold the NAT64 prefix without starting with it.
  for (const wide of ['64::/16', '64:ff00::/24', '64:ff98::/29', '::/16'])
    assert.equal(isPrivate(parseNetwork(wide) as never), true, wide);
  assert.equal(isPrivate(parseNetwork('65::/16') as never), false);
});

test('overlaps: either network containing the other, never across families', () => {
  const n = (text: string) => parseNetwork(text) as never;
  assert.equal(overlaps(n('203.0.113.0/24'), n('203.0.113.9/32')), true);
  assert.equal(overlaps(n('203.0.113.9/32'), n('203.0.113.0/24')), true);
  assert.equal(overlaps(n('203.0.113.0/25'), n('203.0.113.128/25')), false);
  assert.equal(overlaps(n('2001:db8::/32'), n('2001:db8:aa:bb::/64')), true);
  assert.equal(overlaps(n('0.0.0.0/0'), n('::/0')), false);
  assert.equal(listEntry(n('203.0.113.9/32')), '203.0.113.9');
  assert.equal(listEntry(n('2001:db8:aa:bb::/64')), '2001:db8:aa:bb::/64');
});

test('property: overlaps compares the bytes up to the shorter prefix, as masking both there does', () => {
  const network = (family: 4 | 6) =>
    fc.record({
      family: fc.constant(family),
      prefix: fc.integer({ min: 0, max: family === 4 ? 32 : 128 }),
      bytes: fc.uint8Array({ minLength: family === 4 ? 4 : 16, maxLength: family === 4 ? 4 : 16 }),
    });
  // Pairs sharing a random leading run of bytes, so that both answers come up often.
  const pair = fc
    .constantFrom<4 | 6>(4, 6)
    .chain((family) =>
      fc.tuple(network(family), network(family), fc.integer({ min: 0, max: family === 4 ? 4 : 16 })),
    );
  fc.assert(
    fc.property(pair, ([a, b, shared]) => {
      b.bytes.set(a.bytes.subarray(0, shared));
      const p = Math.min(a.prefix, b.prefix);
      const x = maskBytes(a.bytes, p);
      const y = maskBytes(b.bytes, p);
      assert.equal(
        overlaps(a, b),
        x.every((byte, i) => byte === y[i]),
      );
    }),
    { numRuns: 2000 },
  );
});

/** One compiled rule `r` over any record of any sensor and endpoint, with these thresholds. */
function anyRecordRule(minRecords: number, minSensors: number) {
  const [rule] = compileRules({
    rules: {
      r: {
        minCriticality: 0,
        minRecords,
        minSensors,
        within: '1m',
        duration: '1h',
        sensors: null,
        endpoints: null,
        threat: null,
        address: 'source',
      },
    },
  } as never);
  return rule;
}

test('AddressTracker: thresholds within the window, and at most maxTracked units (the least recently seen dropped, counted)', () => {
  const rule = anyRecordRule(3, 2);
  const tracker = new AddressTracker(1000);
  const seen = (at: number, sensor: string) =>
    tracker.observe(
      'u',
      0,
      rule as never,
      { at, sensor, criticality: 2, id: `r${at}` },
      Number.NEGATIVE_INFINITY,
    );
  assert.equal(seen(0, 'a'), null);
  assert.equal(seen(1000, 'a'), null);
  assert.equal(seen(2000, 'a'), null, 'three records but one sensor');
  assert.deepEqual(seen(3000, 'b'), { records: 3, sensors: ['a', 'b'], criticality: 2 });
  // Long after: the window holds only the newest record.
  assert.equal(seen(200_000, 'b'), null);
  for (let i = 0; i < 1500; i++)
    tracker.observe(`n${i}`, 0, rule as never, { at: i, sensor: 's', criticality: 0, id: `n${i}` }, 0);
  assert.equal(tracker.size, 1000);
  assert.equal(tracker.dropped, 501);
});

test('AddressTracker: a new bound (a reload) is taken while the units kept fit in it', () => {
  const rule = anyRecordRule(1, 1);
  const tracker = new AddressTracker(2);
  const seen = (unit: string) =>
    tracker.observe(unit, 0, rule as never, { at: 1, sensor: 's', criticality: 0, id: unit }, 0);
  seen('a');
  seen('b');
  assert.equal(tracker.rebound(1), false, 'two units kept');
  assert.equal(tracker.rebound(3), true);
  seen('c');
  assert.deepEqual([tracker.size, tracker.dropped], [3, 0]);
  seen('d');
  assert.deepEqual([tracker.size, tracker.dropped], [3, 1]);
});

test('a rule counts no record of the collector’s own (a sensor silent or back), whatever its endpoints', () => {
  const rule = anyRecordRule(1, 1);
  const input = (endpoint: string) => ({
    criticality: 3,
    sensor: 'fw1',
    endpoint,
    threat: () => 'sensor silent',
  });
  assert.equal(rule?.matches(input('generic') as never), true);
  assert.equal(rule?.matches(input('collector') as never), false);
});

test('parseNetwork: an IPv4-mapped IPv6 address or network (::ffff:0:0/96 and narrower) is its IPv4 one', () => {
  const text = (s: string) => {
    const n = parseNetwork(s);
    return n ? formatNetwork(n) : null;
  };
  assert.equal(text('::ffff:203.0.113.9'), '203.0.113.9/32');
  assert.equal(text('::FFFF:cb00:7109'), '203.0.113.9/32');
  assert.equal(text('::ffff:198.51.100.0/120'), '198.51.100.0/24');
  assert.equal(text('::ffff:10.0.0.1/104'), '10.0.0.0/8');
  assert.equal(text('::ffff:0:0/96'), '0.0.0.0/0');
  // Wider than the mapped range, or not mapped: IPv6 as written.
  assert.equal(text('::ffff:0:0/95'), '::fffe:0:0/95');
  assert.equal(text('64:ff9b::a00:1'), '64:ff9b::a00:1/128');
  assert.equal(isPrivate(parseNetwork('::ffff:10.0.0.1') as never), true);
  assert.equal(isPrivate(parseNetwork('::ffff:0:0/96') as never), true);
  assert.equal(isPrivate(parseNetwork('::ffff:203.0.113.9') as never), false);
});
