// `--aggregate`: the fewest CIDRs covering exactly the addresses of the blocks, each with the earliest end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  aggregateItems,
  aggregateSteps,
  disjointItems,
  disjointSteps,
} from '../../src/decisions/aggregate.js';
import { type FeedItem, feedItemOf } from '../../src/decisions/feed-item.js';
import { listOrderSteps } from '../../src/decisions/list-order.js';
import { formatNetwork, parseNetwork } from '../../src/decisions/networks.js';
import { ITEMS_PER_STEP, runWhole } from '../../src/decisions/steps.js';

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

test('aggregate (property): the same addresses are covered, and no two entries overlap, either family', () => {
  fc.assert(
    fc.property(
      fc.boolean(),
      fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 28, max: 32 })), {
        maxLength: 40,
      }),
      (v6, parts) => {
        const items = parts.map(([host, prefix]) => {
          const n = parseNetwork(
            v6 ? `2001:db8::${host.toString(16)}/${prefix + 96}` : `192.0.2.${host}/${prefix}`,
          ) as FeedItem['network'];
          return item(formatNetwork(n));
        });
        const out = aggregateItems(items);
        // In a feed's list order already (feed-items.ts does not sort an aggregated feed again).
        assert.deepEqual(out, runWhole(listOrderSteps(out)));
        const covers = (list: FeedItem[], last: number) =>
          list.some((i) => {
            const start = i.network.bytes.at(-1) as number;
            return last >= start && last < start + 2 ** (i.network.bytes.length * 8 - i.network.prefix);
          });
        for (let last = 0; last < 256; last++) if (covers(items, last) !== covers(out, last)) return false;
        const count = (last: number) => out.filter((i) => covers([i], last)).length;
        return Array.from({ length: 256 }, (_, last) => count(last)).every((n) => n <= 1);
      },
    ),
  );
});

test('aggregate: many steps of neighbours, each merged entry with the earliest end and highest criticality inside', () => {
  // 198.51.0.0 to 198.51.39.255 blocked address by address (10,240: past two steps), but for 198.51.20.0.
  const items: FeedItem[] = [];
  for (let i = 0; i < 40 * 256; i++)
    if (i !== 20 * 256)
      items.push(item(`198.51.${i >> 8}.${i & 0xff}/32`, `2026-01-0${2 + (i % 3)}T00:00:00.000Z`, i % 5));
  const out = aggregateItems(items.reverse());
  assert.deepEqual(
    out.map((i) => formatNetwork(i.network)),
    [
      '198.51.0.0/20',
      '198.51.16.0/22',
      '198.51.20.1/32',
      '198.51.20.2/31',
      '198.51.20.4/30',
      '198.51.20.8/29',
      '198.51.20.16/28',
      '198.51.20.32/27',
      '198.51.20.64/26',
      '198.51.20.128/25',
      '198.51.21.0/24',
      '198.51.22.0/23',
      '198.51.24.0/21',
      '198.51.32.0/21',
    ],
  );
  // Each entry: the earliest end and the highest criticality of the addresses inside it.
  for (const entry of out) {
    const first = (entry.network.bytes[2] as number) * 256 + (entry.network.bytes[3] as number);
    const inside = items.filter((i) => {
      const at = (i.network.bytes[2] as number) * 256 + (i.network.bytes[3] as number);
      return at >= first && at < first + 2 ** (32 - entry.network.prefix);
    });
    const name = formatNetwork(entry.network);
    assert.equal(entry.block.until, inside.map((i) => i.block.until).sort()[0], name);
    assert.equal(entry.block.criticality, Math.max(...inside.map((i) => i.block.criticality)), name);
  }
});

test('disjoint (property): each address once, for the longest time of the blocks covering it, either family', () => {
  // The last byte's 256 addresses of 192.0.2.0/24 or 2001:db8::/120, at prefixes of its last 8 bits.
  const text = (v6: boolean, host: number, prefix: number) =>
    formatNetwork(
      parseNetwork(
        v6 ? `2001:db8::${host.toString(16)}/${prefix + 96}` : `192.0.2.${host}/${prefix}`,
      ) as FeedItem['network'],
    );
  fc.assert(
    fc.property(
      fc.boolean(),
      fc.uniqueArray(
        fc.tuple(
          fc.integer({ min: 0, max: 255 }),
          fc.integer({ min: 24, max: 32 }),
          fc.integer({ min: 1, max: 9 }),
        ),
        { maxLength: 30, selector: ([host, prefix]) => text(false, host, prefix) },
      ),
      (v6, parts) => {
        const items = parts.map(([host, prefix, hours]) =>
          item(text(v6, host, prefix), `2026-01-01T0${hours}:00:00.000Z`),
        );
        // As given, and in a feed's order (family, address, the wider first: how feed-items.ts hands them over,
        // where a list with nothing nested is answered without cutting anything).
        const sorted = [...items].sort(
          (a, b) =>
            (a.network.bytes.at(-1) as number) - (b.network.bytes.at(-1) as number) ||
            a.network.prefix - b.network.prefix,
        );
        return holds(items, disjointItems(items)) && holds(sorted, disjointItems(sorted));
      },
    ),
  );
});

test('disjoint: many steps of blocks under a few wide ones by hand, each address once for its longest time', () => {
  // 12,000 /32s over 198.51.0.0/18 (three steps and more), and four /20s by hand over them ending mid-way.
  const at = (i: number) => `2026-01-01T0${1 + (i % 9)}:00:00.000Z`;
  const items = Array.from({ length: 12_000 }, (_, i) => item(`198.51.${i >> 8}.${i & 0xff}/32`, at(i)));
  const wide = [0, 16, 32, 48].map((third) => item(`198.51.${third}.0/20`, '2026-01-01T05:30:00.000Z'));
  const list = [...wide, ...items].sort(
    (a, b) =>
      (a.network.bytes[2] as number) * 256 +
        (a.network.bytes[3] as number) -
        ((b.network.bytes[2] as number) * 256 + (b.network.bytes[3] as number)) ||
      a.network.prefix - b.network.prefix,
  );
  const out = disjointItems(list);
  // Every address of the /18 once: the /20's time where it outlasts the /32 there, else the /32's own.
  const served = new Map<number, number>();
  for (const i of out) {
    const start = (i.network.bytes[2] as number) * 256 + (i.network.bytes[3] as number);
    for (let a = start; a < start + 2 ** (32 - i.network.prefix); a++) {
      assert.ok(!served.has(a), `address ${a} served twice`);
      served.set(a, Date.parse(i.block.until));
    }
  }
  assert.equal(served.size, 4 * 4096);
  const halfPastFive = Date.parse('2026-01-01T05:30:00.000Z');
  for (let a = 0; a < 4 * 4096; a++) {
    const own = a < items.length ? Date.parse(at(a)) : 0;
    assert.equal(served.get(a), Math.max(own, halfPastFive), `address ${a}`);
  }
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

/** Whether `out` serves each address of the last byte (192.0.2.0/24, 2001:db8::/120) once, for the longest time of `items` covering it. */
function holds(items: readonly FeedItem[], out: readonly FeedItem[]): boolean {
  const ends = (list: readonly FeedItem[], last: number) =>
    list
      .filter((i) => {
        const start = i.network.bytes.at(-1) as number;
        return last >= start && last < start + 2 ** (i.network.bytes.length * 8 - i.network.prefix);
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

test('disjoint: a block inside a wider one that ends at the same time is left out (the wider covers it)', () => {
  const five = '2026-01-01T05:00:00.000Z';
  const six = '2026-01-01T06:00:00.000Z';
  assert.deepEqual(
    disjointItems([item('198.51.100.0/30', five), item('198.51.100.2/32', five)]).map((i) =>
      formatNetwork(i.network),
    ),
    ['198.51.100.0/30'],
  );
  // Beside one that outlasts it: the wider is cut around that one alone.
  const out = disjointItems([
    item('198.51.100.0/30', five),
    item('198.51.100.1/32', five),
    item('198.51.100.2/32', six),
  ]);
  assert.deepEqual(
    out.map((i) => `${formatNetwork(i.network)} ${i.block.until}`),
    [`198.51.100.0/31 ${five}`, `198.51.100.2/32 ${six}`, `198.51.100.3/32 ${five}`],
  );
});

test('disjoint: cut at either end of the IPv4 space, into the widest aligned parts', () => {
  const five = '2026-01-01T05:00:00.000Z';
  const six = '2026-01-01T06:00:00.000Z';
  const parts = (list: FeedItem[]) => disjointItems(list).map((i) => formatNetwork(i.network));
  assert.deepEqual(parts([item('255.255.255.0/24', five), item('255.255.255.7/32', six)]), [
    '255.255.255.0/30',
    '255.255.255.4/31',
    '255.255.255.6/32',
    '255.255.255.7/32',
    '255.255.255.8/29',
    '255.255.255.16/28',
    '255.255.255.32/27',
    '255.255.255.64/26',
    '255.255.255.128/25',
  ]);
  assert.deepEqual(parts([item('0.0.0.0/8', five), item('0.0.0.0/32', six)]), [
    '0.0.0.0/32',
    // The rest of 0.0.0.0/8 after its first address: 0.0.0.1/32, 0.0.0.2/31, ... 0.128.0.0/9.
    ...Array.from({ length: 24 }, (_, k) => {
      const at = 2 ** k;
      return `${at >>> 24}.${(at >>> 16) & 255}.${(at >>> 8) & 255}.${at & 255}/${32 - k}`;
    }),
  ]);
});

/**
 * The most items' networks `steps` read between two of its yields (each read counted by a getter): how much of a
 * render one step of it is, whatever the feed's shape.
 */
function mostReadInOneStep(make: (items: FeedItem[]) => Generator, items: FeedItem[]): number {
  let reads = 0;
  const counted = items.map((i) => {
    const network = i.network;
    return {
      block: i.block,
      facts: i.facts,
      get network() {
        reads++;
        return network;
      },
    };
  });
  const steps = make(counted);
  let most = 0;
  for (;;) {
    reads = 0;
    const step = steps.next();
    most = Math.max(most, reads);
    if (step.done) return most;
  }
}

test('disjoint and aggregate in steps: a wide block over many, or one long run, is not one step', () => {
  const count = 5 * ITEMS_PER_STEP;
  const at = (i: number) => `198.${18 + (i >> 16)}.${(i >> 8) & 0xff}.${i & 0xff}/32`;
  // A /15 by hand, ending before every /32 inside it (each outlasts it: the /15 is cut around each one).
  const inside = Array.from({ length: count }, (_, i) => item(at(i), '2026-01-01T09:00:00.000Z'));
  const wide = [item('198.18.0.0/15', '2026-01-01T05:00:00.000Z'), ...inside];
  const cut = mostReadInOneStep((items) => disjointSteps(items), wide);
  assert.ok(cut <= 3 * ITEMS_PER_STEP, `the cut read ${cut} networks in one step`);
  // The cut's entries are made without reading a network again: its three walks over the blocks (their spans,
  // their nesting, their entries) yield a step's worth of blocks at a time each.
  let yields = 0;
  const steps = disjointSteps(wide);
  while (!steps.next().done) yields++;
  assert.ok(yields >= 3 * (count / ITEMS_PER_STEP) - 1, `${yields} steps`);
  // One run of neighbours, merged into a few CIDRs.
  const merge = mostReadInOneStep((items) => aggregateSteps(items), inside);
  assert.ok(merge <= 3 * ITEMS_PER_STEP, `the merge read ${merge} networks in one step`);
});
