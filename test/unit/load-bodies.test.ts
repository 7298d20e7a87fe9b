// The bodies `send --count` posts: distinct records that pass the collector's validation (single and batched,
// both endpoints), and --repeat's few bodies with an Idempotency-Key per /generic body.
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { distinctBodies, insideAddress, repeatedBodies } from '../../src/client/load-bodies.js';
import { validateBody } from '../../src/schemas/validate-records.js';

const NOW = Date.parse('2026-03-29T01:30:00Z');

test('distinct bodies: 5000 single records of each kind, all different and all valid', () => {
  for (const endpoint of ['firewall', 'generic'] as const) {
    const bodies = distinctBodies(endpoint, undefined, NOW);
    assert.equal(bodies.recordsPerRequest, 1);
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const text = bodies.body(i) as string;
      seen.add(text);
      const check = validateBody(endpoint, JSON.parse(text), 1);
      assert.equal(check.ok, true, `${text} ${JSON.stringify(check)}`);
      assert.equal(bodies.idempotencyKey(i), null);
    }
    assert.equal(seen.size, 5000, endpoint);
  }
});

test('distinct bodies: every record of every batch differs, across requests too', () => {
  for (const endpoint of ['firewall', 'generic'] as const) {
    const bodies = distinctBodies(endpoint, 7, NOW);
    assert.equal(bodies.recordsPerRequest, 7);
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const records = JSON.parse(String(bodies.body(i))) as unknown[];
      assert.equal(records.length, 7);
      assert.equal(validateBody(endpoint, records, 1000).ok, true);
      for (const r of records) seen.add(JSON.stringify(r));
    }
    assert.equal(seen.size, 2100, endpoint);
    // The last request --count 100000000 --batch 1000 can make: the longest values still fit the buffer.
    const last = JSON.parse(String(distinctBodies(endpoint, 1000, NOW).body(99_999_999))) as unknown[];
    assert.equal(validateBody(endpoint, last, 1000).ok, true);
    assert.equal(new Set(last.map((r) => JSON.stringify(r))).size, 1000);
  }
});

test('firewall: the source port walks 1024-65535, then the time goes one second back', () => {
  const bodies = distinctBodies('firewall', undefined, NOW);
  const at = (i: number) => JSON.parse(bodies.body(i) as string) as { sport: number; time_received: string };
  assert.deepEqual([at(0).sport, at(64_511).sport, at(64_512).sport], [1024, 65_535, 1024]);
  assert.equal(at(0).time_received, '2026/03/29 01:30:00');
  assert.equal(at(64_511).time_received, '2026/03/29 01:30:00');
  assert.equal(at(64_512).time_received, '2026/03/29 01:29:59');
  // The last record --count 100000000 --batch 1000 can ask for is still a valid, dated record.
  const last = at(100_000_000 * 1000 - 1);
  assert.equal(validateBody('firewall', last, 1).ok, true);
});

test('any two record numbers give different records (property)', () => {
  const firewall = distinctBodies('firewall', undefined, NOW);
  const generic = distinctBodies('generic', undefined, NOW);
  fc.assert(
    fc.property(fc.nat(1e11), fc.nat(1e11), (a, b) => {
      fc.pre(a !== b);
      assert.notEqual(firewall.body(a), firewall.body(b));
      assert.notEqual(generic.body(a), generic.body(b));
    }),
  );
});

test('insideAddress: a valid private address, different for each number, up to 2^53', () => {
  const numbers = [0, 1, 255, 256, 2 ** 24 - 1, 2 ** 24, 2 ** 24 + 1, 2 ** 32, 2 ** 48 + 7, 2 ** 53 - 1];
  const addresses = numbers.map(insideAddress);
  assert.equal(new Set(addresses).size, numbers.length);
  for (const a of addresses) assert.ok(isIP(a) !== 0, a);
  assert.equal(insideAddress(2 ** 24 - 1), '10.255.255.255');
  assert.equal(insideAddress(2 ** 24), 'fd00::0:0:100:0');
});

test('repeated bodies: 64 samples in turn; /generic ones carry a key per body, new for every run', () => {
  const fw = repeatedBodies('firewall', { count: 500 });
  const texts = new Set(Array.from({ length: 500 }, (_, i) => String(fw.body(i))));
  assert.equal(texts.size, 64);
  assert.equal(fw.body(3), fw.body(67));
  assert.equal(fw.idempotencyKey(3), null);
  const gen = repeatedBodies('generic', { count: 500, batch: 5 });
  assert.equal(gen.recordsPerRequest, 5);
  assert.equal(gen.idempotencyKey(3), gen.idempotencyKey(67));
  assert.notEqual(gen.idempotencyKey(3), gen.idempotencyKey(4));
  assert.match(String(gen.idempotencyKey(0)), /^threatcol-send-[\w-]+-0$/);
  assert.notEqual(repeatedBodies('generic', { count: 1 }).idempotencyKey(0), gen.idempotencyKey(0));
  // Fewer requests than 64: as many bodies as requests.
  const three = repeatedBodies('generic', { count: 3 });
  assert.equal(new Set(Array.from({ length: 9 }, (_, i) => String(three.body(i)))).size, 3);
  const given = repeatedBodies('generic', { count: 10, given: '[{"a":1},{"a":2}]' });
  assert.equal(given.recordsPerRequest, 2);
  assert.equal(String(given.body(9)), '[{"a":1},{"a":2}]');
});
