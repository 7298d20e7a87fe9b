// `--aggregate`: the fewest CIDRs covering exactly the addresses of the blocks, each with the earliest end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { aggregateItems, disjointItems } from '../../src/decisions/aggregate.js';
import { type FeedItem, feedItemOf } from '../../src/decisions/feed-item.js';
import { formatNetwork, parseNetwork } from '../../src/decisions/networks.js';

function item(address: string, until = '2026-01-02T00:00:00.000Z', criticality = 2): FeedItem {
  return feedItemOf({
    address,
    rule: 'r',
    reason: 'x',
    since: '2026-01-01T00:00:00.000Z',
    until,
    criticality,
    records: 1,
    sensors: ['fw1'],
    who: null,
  }) as FeedItem;
}

const texts = (items: FeedItem[]) => items.map((i) => formatNetwork(i.network)).sort();

test('aggregate: neighbours join into the widest aligned CIDRs, nothing else', () => {
  const all = Array.from({ length: 256 }, (_, i) => item(`192.0.2.${i}/32`));
  assert.deepEqual(texts(aggregateItems(all)), ['192.0.2.0/24']);
  assert.deepEqual(
    texts(aggregateItems([item('198.51.100.1/32'), item('198.51.100.2/32'), item('198.51.100.3/32')])),
    ['198.51.100.1/32', '198.51.100.2/31'],
  );
  assert.deepEqual(texts(aggregateItems([item('2001:db8:0:0::/64'), item('2001:db8:0:1::/64')])), [
    '2001:db8::/63',
  ]);
  assert.deepEqual(texts(aggregateItems([item('203.0.113.0/24'), item('203.0.113.7/32')])), [
    '203.0.113.0/24',
  ]);
  const [merged] = aggregateItems([
    item('192.0.2.0/32', '2026-01-03T00:00:00.000Z', 4),
    item('192.0.2.1/32', '2026-01-02T00:00:00.000Z', 2),
  ]);
  assert.equal(merged?.block.until, '2026-01-02T00:00:00.000Z', 'the earliest end');
  assert.equal(merged?.block.criticality, 4);
  assert.equal(merged?.block.address, '192.0.2.0/31');
});

test('aggregate (property): the same addresses are covered, and no two entries overlap', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 28, max: 32 })), {
        maxLength: 40,
      }),
      (parts) => {
        const items = parts.map(([host, prefix]) => {
          const n = parseNetwork(`192.0.2.${host}/${prefix}`) as FeedItem['network'];
          return item(formatNetwork(n));
        });
        const out = aggregateItems(items);
        const covers = (list: FeedItem[], last: number) =>
          list.some((i) => {
            const start = i.network.bytes[3] as number;
            return last >= start && last < start + 2 ** (32 - i.network.prefix);
          });
        for (let last = 0; last < 256; last++) if (covers(items, last) !== covers(out, last)) return false;
        const count = (last: number) => out.filter((i) => covers([i], last)).length;
        return Array.from({ length: 256 }, (_, last) => count(last)).every((n) => n <= 1);
      },
    ),
  );
});

test('disjoint (property): each address once, for the longest time of the blocks covering it', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(
        fc.tuple(
          fc.integer({ min: 0, max: 255 }),
          fc.integer({ min: 24, max: 32 }),
          fc.integer({ min: 1, max: 9 }),
        ),
        {
          maxLength: 30,
          selector: ([host, prefix]) =>
            formatNetwork(parseNetwork(`192.0.2.${host}/${prefix}`) as FeedItem['network']),
        },
      ),
      (parts) => {
        const items = parts.map(([host, prefix, hours]) => {
          const n = parseNetwork(`192.0.2.${host}/${prefix}`) as FeedItem['network'];
          return item(formatNetwork(n), `2026-01-01T0${hours}:00:00.000Z`);
        });
        // As given, and in a feed's order (family, address, the wider first: how feed-items.ts hands them over,
        // where a list with nothing nested is answered without cutting anything).
        const sorted = [...items].sort(
          (a, b) =>
            (a.network.bytes[3] as number) - (b.network.bytes[3] as number) ||
            a.network.prefix - b.network.prefix,
        );
        return holds(items, disjointItems(items)) && holds(sorted, disjointItems(sorted));
      },
    ),
  );
});

test('disjoint: a feed-ordered list with nothing nested is itself; one nested network anywhere in it is cut', () => {
  const at = (i: number) => `2026-01-01T0${1 + (i % 9)}:00:00.000Z`;
  const list = Array.from({ length: 200 }, (_, i) => item(`198.51.${i >> 8}.${i & 0xff}/32`, at(i)));
  const six = item('2001:db8::/64', at(0));
  assert.deepEqual(disjointItems([...list, six]), [...list, six]);
  // 198.51.0.100/30 holds .100-.103: placed in feed order (before .100, the wider first), it makes nesting.
  const wide = item('198.51.0.100/30', '2026-01-01T09:30:00.000Z');
  const withWide = [...list.slice(0, 100), wide, ...list.slice(100)];
  const out = disjointItems(withWide);
  // It outlasts the four /32s inside it (02:00-05:00): they are left out, it stays whole.
  assert.deepEqual(
    out.map((i) => i.block.address),
    withWide.map((i) => i.block.address).filter((a) => !/^198\.51\.0\.10[0-3]\/32$/.test(a)),
  );
});

/** Whether `out` serves each address of 192.0.2.0/24 once, for the longest time of `items` covering it. */
function holds(items: readonly FeedItem[], out: readonly FeedItem[]): boolean {
  const ends = (list: readonly FeedItem[], last: number) =>
    list
      .filter((i) => {
        const start = i.network.bytes[3] as number;
        return last >= start && last < start + 2 ** (32 - i.network.prefix);
      })
      .map((i) => Date.parse(i.block.until));
  for (let last = 0; last < 256; last++) {
    const served = ends(out, last);
    const decided = ends(items, last);
    if (served.length > 1) return false;
    if ((served[0] ?? 0) !== Math.max(0, ...decided)) return false;
  }
  return true;
}

test('disjoint: a network nested at the very last address of the one before it is found', () => {
  // In feed order the /30 is followed by the one address inside it, its last: they overlap at that address alone.
  const wide = item('198.51.100.252/30', '2026-01-01T02:00:00.000Z');
  const last = item('198.51.100.255/32', '2026-01-01T05:00:00.000Z');
  const after = item('198.51.101.0/32', '2026-01-01T05:00:00.000Z');
  const out = disjointItems([wide, last, after]);
  // The /32 outlasts the /30: the /30 is cut around it (.252/31, .254/32), the /32 keeps its own time.
  assert.deepEqual(
    out.map((i) => formatNetwork(i.network)),
    ['198.51.100.252/31', '198.51.100.254/32', '198.51.100.255/32', '198.51.101.0/32'],
  );
});
