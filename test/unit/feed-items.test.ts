// Which blocks a feed serves (decisions/feed-items.ts), against a plain model of the rule: the active blocks of
// the feed's family that no allow entry covers; over the cap, the highest criticality, then the newest, the
// first met among equals; listed IPv4 before IPv6, each by address, the wider first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { feedItemSteps, selectFeedItems } from '../../src/decisions/feed-items.js';
import { formatAddress, parseNetwork } from '../../src/decisions/networks.js';
import { ITEMS_PER_STEP, runWhole } from '../../src/decisions/steps.js';
import { applyEntry, type Block, emptyDecisions, type FeedEntry } from '../../src/store/decisions.js';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** The model's list order: family, then the address's bytes, then the prefix (a network's text compared as such). */
function modelKey(address: string): string {
  const n = parseNetwork(address);
  assert.ok(n);
  return `${n.family}${Buffer.from(n.bytes).toString('hex')}${String(n.prefix).padStart(3, '0')}`;
}

test('feed selection (property): the active blocks of its family, not allowed, the most pressing kept, in address order', () => {
  const blockArb = fc.record({
    host: fc.integer({ min: 0, max: 40 }),
    v6: fc.boolean(),
    wide: fc.boolean(),
    criticality: fc.integer({ min: 0, max: 4 }),
    // Few distinct times: ties in criticality and time are common.
    sinceMinutes: fc.integer({ min: 0, max: 3 }),
    untilMinutes: fc.integer({ min: -2, max: 5 }),
  });
  fc.assert(
    fc.property(
      fc.array(blockArb, { maxLength: 40 }),
      fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
      fc.constantFrom<FeedEntry['family']>('any', 'ipv4', 'ipv6'),
      fc.boolean(),
      (specs, cap, family, withAllow) => {
        const state = emptyDecisions();
        for (const b of specs) {
          const address = b.v6
            ? `2001:db8:0:${(b.wide ? b.host << 8 : b.host).toString(16)}::/${b.wide ? 56 : 64}`
            : `198.51.100.${b.wide ? b.host & ~3 : b.host}/${b.wide ? 30 : 32}`;
          const block: Block = {
            address,
            rule: 'r',
            reason: 'test',
            since: iso(NOW - 3_600_000 + b.sinceMinutes * 60_000),
            until: iso(NOW + b.untilMinutes * 60_000),
            criticality: b.criticality,
            records: 1,
            sensors: ['fw1'],
            who: null,
          };
          applyEntry(state, 'block', address, block);
        }
        const allow = withAllow ? ['198.51.100.16/29'] : [];
        const feed: FeedEntry = {
          name: 'f',
          format: 'plain',
          passwordHash: 'sha256:00',
          maxEntries: cap,
          family,
          createdAt: iso(NOW),
          rotatedAt: null,
        };
        const got = selectFeedItems(feed, state, allow, NOW);

        const allowed = allow.map((a) => parseNetwork(a) as NonNullable<ReturnType<typeof parseNetwork>>);
        const active = [...state.blocks.values()].filter((b) => {
          const n = parseNetwork(b.address) as NonNullable<ReturnType<typeof parseNetwork>>;
          if (Date.parse(b.until) <= NOW) return false;
          if ((family === 'ipv4' && n.family !== 4) || (family === 'ipv6' && n.family !== 6)) return false;
          // The allow entry covers the block or lies inside it (both networks agree on the shorter prefix).
          return !allowed.some((a) => {
            if (a.family !== n.family) return false;
            const bits = Math.min(a.prefix, n.prefix);
            const mask = (x: Uint8Array) =>
              [...x].map((v, i) =>
                i * 8 >= bits ? 0 : i * 8 + 8 <= bits ? v : v & (0xff << (8 - (bits - i * 8))),
              );
            return mask(a.bytes).join() === mask(n.bytes).join();
          });
        });
        const ranked = [...active].sort(
          (a, b) => b.criticality - a.criticality || Date.parse(b.since) - Date.parse(a.since),
        );
        const kept = cap === null ? ranked : ranked.slice(0, cap);
        const listed = kept.map((b) => b.address).sort((a, b) => (modelKey(a) < modelKey(b) ? -1 : 1));
        assert.deepEqual(
          got.items.map((i) => i.block.address),
          listed,
        );
        assert.equal(got.leftOut, active.length - kept.length);
      },
    ),
    { numRuns: 500 },
  );
});

/** A block of `address` in force at NOW. */
const activeBlock = (address: string): Block => ({
  address,
  rule: 'r',
  reason: 'test',
  since: iso(NOW - 60_000),
  until: iso(NOW + 60_000),
  criticality: 4,
  records: 1,
  sensors: ['fw1'],
  who: null,
});

/** A plain feed of every block, no cap. */
const PLAIN: FeedEntry = {
  name: 'f',
  format: 'plain',
  passwordHash: 'sha256:00',
  maxEntries: null,
  family: 'any',
  createdAt: iso(NOW),
  rotatedAt: null,
};

test('feed selection (property): any IPv4 and IPv6 networks, of any prefix, listed in address order, the wider first', () => {
  const v4 = fc.record({
    v6: fc.constant(false),
    word: fc.integer({ min: 0, max: 0xffffffff }),
    prefix: fc.integer({ min: 0, max: 32 }),
  });
  const v6 = fc.record({
    v6: fc.constant(true),
    word: fc.integer({ min: 0, max: 0xffffffff }),
    prefix: fc.integer({ min: 0, max: 128 }),
  });
  fc.assert(
    fc.property(fc.array(fc.oneof(v4, v6), { maxLength: 60 }), (specs) => {
      const state = emptyDecisions();
      for (const s of specs) {
        // Host bits cleared, as a block's unit is; often the same network at two prefixes.
        const n = parseNetwork(
          s.v6
            ? `${(s.word >>> 16).toString(16)}:${(s.word & 0xffff).toString(16)}::${(s.word & 0xff).toString(16)}/128`
            : `${s.word >>> 24}.${(s.word >>> 16) & 0xff}.${(s.word >>> 8) & 0xff}.${s.word & 0xff}/32`,
        );
        assert.ok(n);
        const bytes = Uint8Array.from(n.bytes, (v, i) =>
          i * 8 >= s.prefix ? 0 : i * 8 + 8 <= s.prefix ? v : v & (0xff << (8 - (s.prefix - i * 8))),
        );
        const address = `${s.v6 ? formatAddress({ family: 6, prefix: 128, bytes }) : bytes.join('.')}/${s.prefix}`;
        applyEntry(state, 'block', address, activeBlock(address));
      }
      const got = selectFeedItems(PLAIN, state, [], NOW).items.map((i) => i.block.address);
      const listed = [...state.blocks.keys()].sort((a, b) => (modelKey(a) < modelKey(b) ? -1 : 1));
      assert.deepEqual(got, listed);
    }),
    { numRuns: 500 },
  );
});

test('feed selection in steps: the blocks as the first step found them, each once, though the state changes between steps', () => {
  const state = emptyDecisions();
  const block = activeBlock;
  const count = 3 * ITEMS_PER_STEP;
  const address = (i: number) => `198.${18 + (i >> 16)}.${(i >> 8) & 0xff}.${i & 0xff}/32`;
  for (let i = 0; i < count; i++) applyEntry(state, 'block', address(i), block(address(i)));
  const steps = feedItemSteps(PLAIN, state, [], NOW);
  steps.next();
  // Between steps (a write of the files backend, in place): the first block removed and made again (a Map meets
  // it again at its end), and a new one added.
  applyEntry(state, 'block', address(0), null);
  applyEntry(state, 'block', address(0), block(address(0)));
  applyEntry(state, 'block', '203.0.113.1/32', block('203.0.113.1/32'));
  const selected = runWhole(steps);
  const listed = selected.items.map((i) => i.block.address);
  assert.equal(new Set(listed).size, listed.length, 'no block twice');
  assert.equal(listed.length, count);
  assert.ok(!listed.includes('203.0.113.1/32'), 'the blocks as the first step found them');
});

test('feed cap (property): the highest criticality, then the newest, the first met among equals, over many steps of blocks', () => {
  // Times far apart (any ms up to 2^43, where the rank's two words split) and close (ties), criticalities alike.
  const timeArb = fc.oneof(
    fc.integer({ min: 0, max: 2 ** 43 - 1 }),
    fc.constantFrom(NOW - 60_000, NOW - 60_001, NOW - 2 ** 32, 2 ** 32, 2 ** 32 - 1, 2 ** 31, 2 ** 31 - 1, 0),
  );
  const many = 2 * ITEMS_PER_STEP + 5;
  fc.assert(
    fc.property(
      fc.array(fc.record({ criticality: fc.integer({ min: 0, max: 4 }), since: timeArb }), {
        minLength: 1,
        maxLength: 300,
        size: 'medium',
      }),
      fc.boolean(),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (specs, stepped, share) => {
        const state = emptyDecisions();
        // Stepped: the same few blocks again and again, past two steps' worth.
        const count = stepped ? many : specs.length;
        for (let i = 0; i < count; i++) {
          const s = specs[i % specs.length] as (typeof specs)[number];
          const address = `10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}/32`;
          applyEntry(state, 'block', address, { ...activeBlock(address), ...s, since: iso(s.since) });
        }
        const cap = Math.floor(share * (count - 1));
        const got = selectFeedItems({ ...PLAIN, maxEntries: cap }, state, [], NOW);
        const ranked = [...state.blocks.values()].sort(
          (a, b) => b.criticality - a.criticality || Date.parse(b.since) - Date.parse(a.since),
        );
        const want = ranked.slice(0, cap).map((b) => b.address);
        const kept = got.items.map((i) => i.block.address);
        assert.equal(kept.length, want.length);
        assert.equal(got.leftOut, count - cap);
        const wanted = new Set(want);
        assert.ok(
          kept.every((a) => wanted.has(a)),
          'the blocks the model keeps',
        );
      },
    ),
    { numRuns: 60 },
  );
});

test('a block whose criticality is not 0-4 (a damaged store) is not held, so no cap counts it', () => {
  const state = emptyDecisions();
  for (const [i, criticality] of [32, -1, 0, 0, 4.5].entries()) {
    const address = `198.51.100.${i}/32`;
    applyEntry(state, 'block', address, { ...activeBlock(address), criticality });
  }
  assert.deepEqual([...state.blocks.keys()], ['198.51.100.2/32', '198.51.100.3/32']);
  const got = selectFeedItems({ ...PLAIN, maxEntries: 1 }, state, [], NOW);
  assert.equal(got.items.length, 1);
  assert.equal(got.leftOut, 1);
});

test('an --aggregate feed caps its merged entries, not its blocks: blocks that merge under the cap are all served', () => {
  const state = emptyDecisions();
  // 8 neighbours (one /29 merged) and two lone addresses: 10 blocks, 3 entries.
  const addresses = [
    ...Array.from({ length: 8 }, (_, i) => `198.51.100.${i}/32`),
    '192.0.2.1/32',
    '203.0.113.9/32',
  ];
  for (const a of addresses) applyEntry(state, 'block', a, activeBlock(a));
  const aggregate = (maxEntries: number) =>
    selectFeedItems({ ...PLAIN, aggregate: true, maxEntries }, state, [], NOW);
  const fits = aggregate(3);
  assert.deepEqual(
    fits.items.map((i) => i.block.address),
    ['192.0.2.1/32', '198.51.100.0/29', '203.0.113.9/32'],
  );
  assert.equal(fits.leftOut, 0);
  // Over the cap even merged: the 2 most pressing entries as merged (all alike here: the first met in list
  // order), the blocks of the entry left out counted.
  const over = aggregate(2);
  assert.deepEqual(
    over.items.map((i) => i.block.address),
    ['192.0.2.1/32', '198.51.100.0/29'],
  );
  assert.equal(over.leftOut, 1);
});

test('an --aggregate feed one entry over its cap still fills it: the most pressing merged entries, not blocks that merge into a few', () => {
  const state = emptyDecisions();
  // 4 full /30s (16 blocks, 4 entries), then a lone block of criticality 4 more pressing than any: 5 entries.
  const addresses = [0, 64, 128, 192].flatMap((base) =>
    Array.from({ length: 4 }, (_, i) => `198.51.100.${base + i}/32`),
  );
  for (const a of addresses) applyEntry(state, 'block', a, { ...activeBlock(a), criticality: 2 });
  applyEntry(state, 'block', '192.0.2.1/32', { ...activeBlock('192.0.2.1/32'), criticality: 4 });
  const got = selectFeedItems({ ...PLAIN, aggregate: true, maxEntries: 4 }, state, [], NOW);
  assert.equal(got.items.length, 4, 'the cap filled');
  assert.equal(got.items[0]?.block.address, '192.0.2.1/32', 'the most pressing kept');
  assert.ok(got.items.slice(1).every((i) => i.network.prefix === 30));
  assert.equal(got.leftOut, 4, "one /30's four blocks left out");
});
