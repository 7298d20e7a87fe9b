// `feed add --aggregate`: a feed's blocks merged into the fewest CIDRs that cover exactly the same addresses
// (neighbours and overlaps joined), for firewalls whose lists are short. A merged entry carries the earliest end
// and the highest criticality of what it covers: it never blocks an address longer than decided, and the feed
// is rendered again when that end comes.
import type { Block } from '../store/decisions.js';
import { type FeedItem, factsOf, itemUntil, untilOf } from './feed-item.js';
import { listOrderSteps } from './list-order.js';
import { compareNetworks, formatNetwork, type Network, overlaps, wordAt } from './networks.js';
import { ITEMS_PER_STEP, runWhole, type Steps } from './steps.js';

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

/** cidrsOf for IPv4 in numbers (cutting a wide block around a day's blocks makes thousands of them). */
function cidrsOf4(start: number, end: number): Network[] {
  const out: Network[] = [];
  let at = start;
  while (at <= end) {
    // The largest aligned block at `at`: no wider than its lowest set bit, nor than what is left up to `end`.
    const aligned = at === 0 ? 32 : 31 - Math.clz32((at & -at) >>> 0);
    const left = end - at + 1;
    const fits = left >= 2 ** 32 ? 32 : 31 - Math.clz32(left);
    const size = Math.min(aligned, fits);
    out.push({
      family: 4,
      prefix: 32 - size,
      bytes: Uint8Array.of(at >>> 24, (at >>> 16) & 255, (at >>> 8) & 255, at & 255),
    });
    at += 2 ** size;
  }
  return out;
}

/**
 * A merged entry's block being made: the earliest end (the first met of those ending then), the highest
 * criticality, the latest start, the records and sensors of the blocks it covers, folded in one at a time (a
 * run of 100,000 blocks is no array of them, nor one step).
 */
interface Merging {
  first: Block | null;
  firstUntil: number;
  count: number;
  criticality: number;
  records: number;
  sensors: Set<string>;
  /** The latest `since` of the blocks it covers (a capped feed ranks the entry by it). */
  since: string;
  sinceMs: number;
}

const merging = (): Merging => ({
  first: null,
  firstUntil: Number.POSITIVE_INFINITY,
  count: 0,
  criticality: 0,
  records: 0,
  sensors: new Set(),
  since: '',
  sinceMs: Number.NEGATIVE_INFINITY,
});

function fold(m: Merging, block: Block): void {
  const until = untilOf(block);
  if (m.first === null || until < m.firstUntil) {
    m.first = block;
    m.firstUntil = until;
  }
  m.count++;
  m.criticality = Math.max(m.criticality, block.criticality);
  m.records += block.records;
  for (const sensor of block.sensors) m.sensors.add(sensor);
  const since = factsOf(block).since;
  if (m.since === '' || since > m.sinceMs) {
    m.since = block.since;
    m.sinceMs = since;
  }
}

/** The entry's block: a block alone as it is, else the earliest to end with the others' facts added. */
function merged(m: Merging, address: string): Block {
  const first = m.first as Block;
  if (m.count === 1) return first;
  return {
    ...first,
    address,
    since: m.since,
    criticality: m.criticality,
    records: m.records,
    sensors: [...m.sensors].sort(),
    reason: `${m.count} blocks merged`,
  };
}

export function aggregateItems(items: readonly FeedItem[]): FeedItem[] {
  return runWhole(aggregateSteps(items));
}

/**
 * aggregateItems in steps (steps.ts): the items in address order (list-order.ts), then each run of items that
 * touch or overlap merged into the fewest CIDRs as the walk leaves it (IPv4 in numbers, IPv6 in BigInts). The
 * entries come out in a feed's list order: runs in address order, apart from each other, their parts in order.
 */
export function* aggregateSteps(items: readonly FeedItem[]): Steps<FeedItem[]> {
  const ordered = yield* listOrderSteps(items);
  const out: FeedItem[] = [];
  // The run of items that touch or overlap being walked: ordered[from, to), its family, first and last address.
  let from = 0;
  let family: 4 | 6 = 4;
  let start: number | bigint = 0;
  let end: number | bigint = -1;
  function* flush(to: number): Steps<void> {
    if (to - from === 1) {
      // Alone: its own network is the fewest CIDRs (most items of a feed), served as it is.
      out.push(ordered[from] as FeedItem);
      return;
    }
    const parts = cidrsIn(family, start, end);
    const partSpans = parts.map(spanOfNetwork);
    const inside = parts.map(merging);
    // Each item's block into every part it overlaps (a wide item can reach over several parts).
    for (let k = from; k < to; k++) {
      if (k > from && (k - from) % ITEMS_PER_STEP === 0) yield;
      const item = ordered[k] as FeedItem;
      const span = spanOf(item);
      for (let p = 0; p < parts.length; p++) {
        const part = partSpans[p] as Span;
        if (span.end >= part.start && span.start <= part.end) fold(inside[p] as Merging, item.block);
      }
    }
    for (let p = 0; p < parts.length; p++) {
      const network = parts[p] as Network;
      const m = inside[p] as Merging;
      // Each block lies in one part (parts and blocks are aligned CIDRs: a part holds a block or lies in it, and
      // the walk makes the widest part at each address), so the parts' counts add up to the run's blocks.
      out.push({ network, block: merged(m, formatNetwork(network)), facts: null, merged: m.count });
    }
  }

  for (let i = 0; i < ordered.length; i++) {
    if (i > 0 && i % ITEMS_PER_STEP === 0) yield;
    const span = spanOf(ordered[i] as FeedItem);
    if (i > 0 && span.family === family && span.start <= stepBy(end, 1)) {
      if (span.end > end) end = span.end;
      continue;
    }
    if (i > 0) yield* flush(i);
    from = i;
    family = span.family;
    start = span.start;
    end = span.end;
  }
  if (ordered.length > 0) yield* flush(ordered.length);
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

/**
 * An item's addresses, first and last: numbers for IPv4 (no BigInt for most items), BigInts for IPv6. Compared
 * only within a family (`<` and `>=` compare a number with a number, a BigInt with a BigInt).
 */
interface Span {
  family: 4 | 6;
  start: number | bigint;
  end: number | bigint;
}

function spanOf(item: FeedItem): Span {
  return spanOfNetwork(item.network);
}

function spanOfNetwork(network: Network): Span {
  const { family, bytes, prefix } = network;
  if (family === 4) {
    const start = wordAt(bytes);
    return { family, start, end: start + 2 ** (32 - prefix) - 1 };
  }
  const start = toBigInt(bytes);
  return { family, start, end: start + (1n << BigInt(128 - prefix)) - 1n };
}

/** `n` moved by one address, in its own kind of number. */
const stepBy = (n: number | bigint, by: 1 | -1) => (typeof n === 'bigint' ? n + BigInt(by) : n + by);

/** The fewest CIDRs covering the addresses from `start` to `end` of a family. */
const cidrsIn = (family: 4 | 6, start: number | bigint, end: number | bigint): Network[] =>
  family === 4 ? cidrsOf4(start as number, end as number) : cidrsOf(start as bigint, end as bigint, 6);

interface Nested {
  span: Span;
  item: FeedItem;
  /** When its own block ends (ms). */
  own: number;
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
 * disjointItems in steps (steps.ts), every loop over the items yielding every ITEMS_PER_STEP items: a wide block
 * by hand over a day's blocks makes every render cut (one piece of 100 ms for 100,000 entries before).
 */
export function* disjointSteps(items: readonly FeedItem[]): Steps<readonly FeedItem[]> {
  if (yield* nothingNested(items)) return items;
  return yield* cutNestedSteps(items);
}

function* cutNestedSteps(items: readonly FeedItem[]): Steps<FeedItem[]> {
  const order = (a: Nested, b: Nested) =>
    a.span.family - b.span.family ||
    (a.span.start < b.span.start ? -1 : a.span.start > b.span.start ? 1 : 0) ||
    (a.span.end > b.span.end ? -1 : a.span.end < b.span.end ? 1 : 0);
  const nodes: Nested[] = new Array(items.length);
  let sorted = true;
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % ITEMS_PER_STEP === 0) yield;
    const item = items[i] as FeedItem;
    const own = itemUntil(item);
    const node: Nested = { span: spanOf(item), item, own, children: [], latest: own };
    nodes[i] = node;
    if (i > 0 && order(nodes[i - 1] as Nested, node) > 0) sorted = false;
  }
  // A feed's items come in address order already (feed-items.ts): sorted again only when they do not.
  if (!sorted) {
    yield;
    nodes.sort(order);
  }
  // Each node under the nearest open one that holds it; a node leaving the open ones passes its latest end up.
  const roots: Nested[] = [];
  const open: Nested[] = [];
  const close = () => {
    const done = open.pop() as Nested;
    const parent = open.at(-1);
    if (parent !== undefined) parent.latest = Math.max(parent.latest, done.latest);
  };
  for (let i = 0; i < nodes.length; i++) {
    if (i > 0 && i % ITEMS_PER_STEP === 0) yield;
    const node = nodes[i] as Nested;
    while (open.length > 0) {
      const top = open.at(-1) as Nested;
      if (top.span.family === node.span.family && top.span.end >= node.span.start) break;
      close();
    }
    (open.at(-1)?.children ?? roots).push(node);
    open.push(node);
  }
  while (open.length > 0) close();
  if (roots.length === nodes.length) return [...items];
  const out: FeedItem[] = [];
  const cut = (family: 4 | 6, from: number | bigint, to: number | bigint, block: Block) => {
    for (const network of cidrsIn(family, from, to)) out.push({ network, block, facts: null });
  };
  // A node's entries: its own, or its parts around the blocks inside it that outlast it (their own entries).
  // Recursive through those alone (a block inside a wider one that ends no later adds nothing); a step every
  // ITEMS_PER_STEP blocks met, inside a wide block too (a /8 by hand over a day's blocks holds thousands).
  let met = 0;
  function* emit(node: Nested, covering: Block | null, coveringUntil: number): Steps<void> {
    if (++met % ITEMS_PER_STEP === 0) yield;
    const outlasted = covering !== null && coveringUntil > node.own;
    const block = outlasted ? covering : node.item.block;
    const until = outlasted ? coveringUntil : node.own;
    if (node.latest <= until) {
      out.push(block === node.item.block ? node.item : { network: node.item.network, block, facts: null });
      return;
    }
    let at = node.span.start;
    for (const child of node.children) {
      if (child.latest <= until) continue;
      if (child.span.start > at) cut(node.span.family, at, stepBy(child.span.start, -1), block);
      if (child.children.length === 0) {
        // A block inside nothing else that outlasts this one: its own entry (most of a wide block's).
        if (++met % ITEMS_PER_STEP === 0) yield;
        out.push(child.item);
      } else yield* emit(child, block, until);
      at = stepBy(child.span.end, 1);
    }
    if (at <= node.span.end) cut(node.span.family, at, node.span.end, block);
  }
  for (const root of roots) yield* emit(root, null, 0);
  return out;
}
