// `feed add --aggregate`: a feed's blocks merged into the fewest CIDRs that cover exactly the same addresses
// (neighbours and overlaps joined), for firewalls whose lists are short. A merged entry carries the earliest end
// and the highest criticality of what it covers: it never blocks an address longer than decided, and the feed
// is rendered again when that end comes.
import type { Block } from '../store/decisions.js';
import { type FeedItem, untilOf } from './feed-item.js';
import { compareNetworks, formatNetwork, type Network, overlaps, wordAt } from './networks.js';
import { ITEMS_PER_STEP, runWhole, type Steps } from './steps.js';

interface Range {
  family: 4 | 6;
  start: bigint;
  end: bigint;
  items: FeedItem[];
}

const bits = (family: 4 | 6) => (family === 4 ? 32 : 128);

function toBigInt(bytes: Uint8Array): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n;
}

function toBytes(n: bigint, family: 4 | 6): Uint8Array {
  const out = new Uint8Array(family === 4 ? 4 : 16);
  let rest = n;
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

function rangeOf(item: FeedItem): Range {
  const width = bits(item.network.family);
  const start = toBigInt(item.network.bytes);
  const size = 1n << BigInt(width - item.network.prefix);
  return { family: item.network.family, start, end: start + size - 1n, items: [item] };
}

/** The fewest CIDRs covering [start, end]: the largest aligned block at each step. */
function cidrsOf(start: bigint, end: bigint, family: 4 | 6): Network[] {
  const width = bits(family);
  const out: Network[] = [];
  let at = start;
  while (at <= end) {
    let size = 0;
    while (size < width) {
      const next = 1n << BigInt(size + 1);
      if (at % next !== 0n || at + next - 1n > end) break;
      size++;
    }
    out.push({ family, prefix: width - size, bytes: toBytes(at, family) });
    at += 1n << BigInt(size);
  }
  return out;
}

/** Each merged entry's block: the earliest end and the highest criticality of the blocks it covers. */
function merged(blocks: Block[], address: string): Block {
  const first = blocks.reduce((a, b) => (untilOf(b) < untilOf(a) ? b : a));
  if (blocks.length === 1) return first;
  return {
    ...first,
    address,
    criticality: Math.max(...blocks.map((b) => b.criticality)),
    records: blocks.reduce((n, b) => n + b.records, 0),
    sensors: [...new Set(blocks.flatMap((b) => b.sensors))].sort(),
    reason: `${blocks.length} blocks merged`,
  };
}

export function aggregateItems(items: readonly FeedItem[]): FeedItem[] {
  const ranges = items
    .map(rangeOf)
    .sort((a, b) => a.family - b.family || (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const joined: Range[] = [];
  for (const range of ranges) {
    const last = joined.at(-1);
    if (last && last.family === range.family && range.start <= last.end + 1n) {
      if (range.end > last.end) last.end = range.end;
      last.items.push(...range.items);
    } else {
      joined.push({ ...range, items: [...range.items] });
    }
  }
  const out: FeedItem[] = [];
  for (const range of joined) {
    for (const network of cidrsOf(range.start, range.end, range.family)) {
      const start = toBigInt(network.bytes);
      const end = start + (1n << BigInt(bits(range.family) - network.prefix)) - 1n;
      const inside = range.items.filter((item) => {
        const r = rangeOf(item);
        return r.end >= start && r.start <= end;
      });
      out.push({
        network,
        block: merged(
          inside.map((item) => item.block),
          formatNetwork(network),
        ),
        facts: null,
      });
    }
  }
  return out;
}

/**
 * Whether the items are in a feed's order (feed-items.ts: family, address, the wider first) with no network
 * inside another: then they are their own disjoint list. Networks nest or are apart, and in that order a network
 * holding others is followed by one of them, so comparing each with the next finds any nesting. No BigInt, no
 * object per item: most feeds hold no nested block, and this ran over every item of every render (a
 * 100,000-entry nftables feed took 250-400 ms here, of 310-500 for the whole render).
 */
function* nothingNested(items: readonly FeedItem[]): Steps<boolean> {
  /** The last address of the item before, when it was IPv4 (each item's bytes read once). */
  let end = -1;
  for (let i = 0; i < items.length; i++) {
    // A step's items at a time: their networks are read from all over the heap (200-300 ns each).
    if (i > 0 && i % ITEMS_PER_STEP === 0) yield;
    const b = (items[i] as FeedItem).network;
    if (b.family === 4 && (i === 0 || end >= 0)) {
      // Two IPv4 networks as numbers: b starts after all of the one before.
      const start = wordAt(b.bytes);
      if (start <= end) return false;
      end = start + 2 ** (32 - b.prefix) - 1;
      continue;
    }
    const a = i > 0 ? (items[i - 1] as FeedItem).network : null;
    if (a !== null && (compareNetworks(a, b) > 0 || overlaps(a, b))) return false;
    end = -1;
  }
  return true;
}

interface Nested {
  range: Range;
  item: FeedItem;
  children: Nested[];
  /** The latest end in this block and the blocks inside it (ms). */
  latest: number;
}

/**
 * The same addresses for the same times, with no two entries overlapping: for an nftables interval set, which
 * refuses an element inside another ("conflicting intervals"), so a /24 blocked by hand over an address a rule
 * blocked would fail the whole script and the firewall would keep its old list. CIDRs are either nested or
 * disjoint: a block inside a wider one that ends no later is dropped (the wider covers it); one that outlasts
 * it keeps its own entry, and the wider one is cut around it. Blocks overlapping nothing are served as they are.
 */
export function disjointItems(items: readonly FeedItem[]): readonly FeedItem[] {
  return runWhole(disjointSteps(items));
}

/**
 * disjointItems in steps (steps.ts): the check that nothing is nested yields every ITEMS_PER_STEP items; a list
 * with nesting (a block by hand over others) is cut in one step.
 */
export function* disjointSteps(items: readonly FeedItem[]): Steps<readonly FeedItem[]> {
  if (yield* nothingNested(items)) return items;
  return cutNested(items);
}

function cutNested(items: readonly FeedItem[]): FeedItem[] {
  const order = (a: Range, b: Range) =>
    a.family - b.family ||
    (a.start < b.start ? -1 : a.start > b.start ? 1 : 0) ||
    (a.end > b.end ? -1 : a.end < b.end ? 1 : 0);
  const ranges = items.map(rangeOf);
  // A feed's items come in address order already (feed-items.ts): sorted again only when they do not.
  if (ranges.some((range, i) => i > 0 && order(ranges[i - 1] as Range, range) > 0)) ranges.sort(order);
  const roots: Nested[] = [];
  const open: Nested[] = [];
  for (const range of ranges) {
    const item = range.items[0] as FeedItem;
    const node: Nested = { range, item, children: [], latest: 0 };
    while (open.length > 0) {
      const top = open.at(-1) as Nested;
      if (top.range.family === range.family && top.range.end >= range.start) break;
      open.pop();
    }
    (open.at(-1)?.children ?? roots).push(node);
    open.push(node);
  }
  if (roots.length === ranges.length) return [...items];
  const latest = (node: Nested): number => {
    node.latest = untilOf(node.item.block);
    for (const child of node.children) node.latest = Math.max(node.latest, latest(child));
    return node.latest;
  };
  const out: FeedItem[] = [];
  const emit = (node: Nested, covering: Block | null) => {
    const own = untilOf(node.item.block);
    const block = covering !== null && untilOf(covering) > own ? covering : node.item.block;
    const until = untilOf(block);
    const outlasting = node.children.filter((child) => child.latest > until);
    if (outlasting.length === 0) {
      out.push(block === node.item.block ? node.item : { network: node.item.network, block, facts: null });
      return;
    }
    let at = node.range.start;
    for (const child of outlasting) {
      if (child.range.start > at)
        for (const network of cidrsOf(at, child.range.start - 1n, node.range.family))
          out.push({ network, block, facts: null });
      emit(child, block);
      at = child.range.end + 1n;
    }
    if (at <= node.range.end)
      for (const network of cidrsOf(at, node.range.end, node.range.family))
        out.push({ network, block, facts: null });
  };
  for (const root of roots) {
    latest(root);
    emit(root, null);
  }
  return out;
}
