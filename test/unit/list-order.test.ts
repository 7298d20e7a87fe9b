// A feed's list order (decisions/list-order.ts), a radix sort in steps, against a plain model: IPv4 before IPv6,
// then the address's bytes, then the prefix (the wider first), equal networks in the order they came.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { FeedItem } from '../../src/decisions/feed-item.js';
import { listOrderSteps } from '../../src/decisions/list-order.js';
import type { Network } from '../../src/decisions/networks.js';
import { ITEMS_PER_STEP, runWhole } from '../../src/decisions/steps.js';
import type { Block } from '../../src/store/decisions.js';

/** An item of network `n`, its block named by `tag` (the model's tie-break: the order the items came in). */
function item(n: Network, tag: number): FeedItem {
  return { block: { address: String(tag) } as Block, network: n, facts: null };
}

function modelOrder(items: FeedItem[]): FeedItem[] {
  const key = (n: Network) =>
    `${n.family}${Buffer.from(n.bytes).toString('hex')}${String(n.prefix).padStart(3, '0')}`;
  // Array.prototype.sort is stable: equal keys keep the order they came in.
  return [...items].sort((a, b) => {
    const x = key(a.network);
    const y = key(b.network);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/**
 * Each 32-bit word of an address one of a few values (equal words, equal halves and equal networks are common: a
 * pass left out or in the wrong order shows), or any.
 */
const wordArb = fc.oneof(
  { arbitrary: fc.constantFrom(0, 0x0000ffff, 0xffff0000), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 0xffffffff }), weight: 1 },
);
const bytesOf = (words: number[]) => {
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  for (const [k, w] of words.entries()) view.setUint32(k * 4, w);
  return bytes;
};

/** A network of either family, any prefix (host bits left as drawn: the order reads the bytes as they are). */
const networkArb: fc.Arbitrary<Network> = fc.oneof(
  fc.record({
    family: fc.constant(4 as const),
    bytes: fc.array(wordArb, { minLength: 1, maxLength: 1 }).map(bytesOf),
    prefix: fc.integer({ min: 0, max: 32 }),
  }),
  fc.record({
    family: fc.constant(6 as const),
    bytes: fc.array(wordArb, { minLength: 4, maxLength: 4 }).map(bytesOf),
    prefix: fc.integer({ min: 0, max: 128 }),
  }),
) as fc.Arbitrary<Network>;

const tags = (items: FeedItem[]) => items.map((i) => i.block.address);

/** Fails at the first place the orders differ (deepEqual's diff of thousands of items takes minutes). */
function sameOrder(got: FeedItem[], want: FeedItem[]): void {
  const [a, b] = [tags(got), tags(want)];
  const at = a.findIndex((tag, i) => tag !== b[i]);
  assert.ok(at === -1 && a.length === b.length, `item ${at} of ${b.length}: got ${a[at]}, want ${b[at]}`);
}

test('list order (property): family, address bytes, prefix, equal networks as they came', () => {
  fc.assert(
    fc.property(fc.array(networkArb, { maxLength: 80, size: 'medium' }), (networks) => {
      const items = networks.map((n, i) => item(n, i));
      // Compared (few items), and by the radix passes a large feed takes.
      sameOrder(runWhole(listOrderSteps(items)), modelOrder(items));
      sameOrder(runWhole(listOrderSteps(items, 0)), modelOrder(items));
    }),
    { numRuns: 1000 },
  );
});

test('list order: many steps of items of both families, every prefix, duplicates, against the model', () => {
  // A seeded walk (the same items each run): more items than three steps take, so every loop crosses a step.
  let seed = 12345;
  const next = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed;
  };
  const items: FeedItem[] = [];
  for (let i = 0; i < 3 * ITEMS_PER_STEP + 17; i++) {
    const v6 = next() % 3 === 0;
    // Words of a few values or any: addresses alike in their first words are common.
    const words = Array.from({ length: v6 ? 4 : 1 }, () => [0, 0xffff0000, next()][next() % 3] as number);
    const bytes = bytesOf(words);
    const n = { family: v6 ? 6 : 4, bytes, prefix: next() % (v6 ? 129 : 33) } as Network;
    items.push(item(n, i));
    // Now and then the same network again.
    if (next() % 50 === 0) items.push(item({ ...n }, ++i));
  }
  sameOrder(runWhole(listOrderSteps(items)), modelOrder(items));
});

test('list order: the sort itself yields, a few thousand items at a time (no step sorts the whole feed)', () => {
  const n = 8 * ITEMS_PER_STEP;
  const items = Array.from({ length: n }, (_, i) => {
    const x = Math.imul(i + 1, 2_654_435_761) >>> 0;
    return item(
      {
        family: 4,
        bytes: Uint8Array.of(x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255),
        prefix: 32,
      } as Network,
      i,
    );
  });
  const steps = listOrderSteps(items);
  let yields = 0;
  let step = steps.next();
  while (!step.done) {
    yields++;
    step = steps.next();
  }
  // The keys' loop, then two passes (the address's halves) of two loops each: at least n / ITEMS_PER_STEP apiece.
  assert.ok(yields >= 5 * (n / ITEMS_PER_STEP) - 5, `${yields} yields`);
  sameOrder(step.value, modelOrder(items));
});
