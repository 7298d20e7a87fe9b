// Property tests of the enrichment's address handling: every address the record validators accept is read
// (never thrown on), public ones are looked up, and no private, reserved or documentation address is.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import { isPublic, readAddress, WORDS } from '../../src/enrich/address-words.js';
import { SHIPPED_ASN, SHIPPED_COUNTRY } from '../../src/enrich/databases.js';
import { startEnricher } from '../../src/enrich/enricher.js';
import { isIpAddress } from '../../src/schemas/ip-address.js';

const enricher = startEnricher(
  { enabled: true, countryDb: '', asnDb: '', maxAgeDays: 180 },
  { logger: pino({ level: 'silent' }), pollIntervalMs: 3_600_000 },
);
test.after(() => enricher.stop());

/** Every non-public network, as node's BlockList checks it (an independent reading of the same list). */
const notPublic4 = new BlockList();
// Apart: a BlockList checks an IPv4 address against its IPv6 rules too, as ::ffff:a.b.c.d.
const notPublic6 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  notPublic4.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 3], // outside 2000::/3 is not global unicast (loopback, ULA, link-local, multicast...)
  ['4000::', 2],
  ['8000::', 1],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
] as const)
  notPublic6.addSubnet(net, bits, 'ipv6');

const anyAddress = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4().map((a) => `::ffff:${a}`),
  fc.ipV6().map((a) => `${a}%eth0`),
  fc.ipV4Extended(),
  fc.string({ maxLength: 64 }),
  fc.stringMatching(/^[0-9a-fA-F:.%]{0,45}$/),
);

test('property: every address the validators accept is read, as node reads it; nothing throws on any text', () => {
  fc.assert(
    fc.property(anyAddress, (text) => {
      const family = readAddress(text);
      const lookedUp = enricher.lookUp(text);
      if (!isIpAddress(text)) return;
      assert.notEqual(family, 0, text);
      // The same address as node's BlockList sees it (an IPv4-mapped address as its IPv4 one).
      const plain = text.split('%')[0] as string;
      const v4 = family === 4;
      const check = v4 && isIP(plain) === 6 ? plain.slice(plain.lastIndexOf(':') + 1) : plain;
      const mapped = v4 && isIP(plain) === 6 && !check.includes('.');
      if (!mapped) {
        const blocked = isIP(check) === 4 ? notPublic4.check(check, 'ipv4') : notPublic6.check(check, 'ipv6');
        assert.equal(isPublic(family as 4 | 6), !blocked, text);
        if (blocked) assert.equal(lookedUp, null, text);
      }
    }),
    { numRuns: 5000 },
  );
});

test('property: IPv4 text reads back to the same numbers', () => {
  fc.assert(
    fc.property(fc.ipV4(), (text) => {
      assert.equal(readAddress(text), 4);
      const w = WORDS[0] as number;
      assert.equal(`${w >>> 24}.${(w >>> 16) & 255}.${(w >>> 8) & 255}.${w & 255}`, text);
    }),
  );
});

test('the shipped databases know 8.8.8.8 and 2001:4860:4860::8888; documentation addresses get nothing', (t) => {
  if (!existsSync(SHIPPED_COUNTRY) || !existsSync(SHIPPED_ASN))
    return t.skip('dist/ not built (npm run build)');
  for (const a of ['8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8'])
    assert.deepEqual(
      { ...enricher.lookUp(a), as_org: undefined },
      { country: 'US', asn: 15169, as_org: undefined },
      a,
    );
  for (const a of [
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.1',
    '2001:db8::1',
    '3fff::1',
    '10.0.0.1',
    'fc00::1',
  ])
    assert.equal(enricher.lookUp(a), null, a);
});

test('isPublic agrees with the list at the edges of every /16, and of every /24 of a first octet the list splits', () => {
  const text = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  const split = new Set([100, 169, 172, 192, 198, 203]);
  for (let net = 0; net < 2 ** 32; net += 2 ** 8) {
    const size = split.has(net >>> 24) ? 2 ** 8 : 2 ** 16;
    if (net % size !== 0) continue;
    for (const a of [net, net + size - 1]) {
      assert.equal(readAddress(text(a)), 4);
      assert.equal(isPublic(4), !notPublic4.check(text(a), 'ipv4'), text(a));
    }
  }
});
