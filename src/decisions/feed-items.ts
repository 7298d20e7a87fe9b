// Which blocks a feed serves now: active, of its address family, not covered by an allow entry, the highest
// criticality then the newest kept up to its cap; printed in address order (a stable body for the same blocks).
import type { Block, DecisionsState, FeedEntry } from '../store/decisions.js';
import { aggregateItems } from './aggregate.js';
import { allowedBy } from './allowed.js';
import { type Facts, type FeedItem, factsOf } from './feed-item.js';
import { wordAt } from './networks.js';
import { DEFAULT_CAPS } from './render-feed.js';
import { ITEMS_PER_STEP, runWhole, type Steps } from './steps.js';

export interface FeedSelection {
  items: FeedItem[];
  /** Active blocks the cap left out. */
  leftOut: number;
  /** The selection is stale from this instant (a block or allow entry in it expires). */
  validUntil: number;
}

export function selectFeedItems(
  feed: FeedEntry,
  state: DecisionsState,
  configuredAllow: readonly string[],
  now: number,
): FeedSelection {
  return runWhole(feedItemSteps(feed, state, configuredAllow, now));
}

/**
 * selectFeedItems in steps (steps.ts), yielding every ITEMS_PER_STEP blocks. The blocks are those of the state as
 * the first step finds it: both backends change their state object in place, and a block removed and written
 * again between steps would otherwise be met twice (a Map walk meets a key set again after it as a new one). The
 * cap, the merge and the sort are a step each: a native sort for IPv4, and for the rare large IPv6 or
 * `--aggregate` feed the comparisons of all its items at once.
 */
export function* feedItemSteps(
  feed: FeedEntry,
  state: DecisionsState,
  configuredAllow: readonly string[],
  now: number,
): Steps<FeedSelection> {
  let validUntil = Number.POSITIVE_INFINITY;
  const items: FeedItem[] = [];
  const blocks = [...state.blocks.values()];
  const allows = [...state.allow.values()];
  for (let i = 0; i < blocks.length; i++) {
    if (i > 0 && i % ITEMS_PER_STEP === 0) yield;
    const block = blocks[i] as Block;
    const facts = factsOf(block);
    const { until, network } = facts;
    if (!(until > now) || network === null) continue;
    if (feed.family === 'ipv4' && network.family !== 4) continue;
    if (feed.family === 'ipv6' && network.family !== 6) continue;
    if (allowedBy(network, configuredAllow, allows, now) !== null) continue;
    validUntil = Math.min(validUntil, until);
    items.push({ block, network, facts });
  }
  for (const entry of allows) {
    const until = entry.until === null ? Number.NaN : Date.parse(entry.until);
    if (until > now) validUntil = Math.min(validUntil, until);
  }
  yield;
  const cap = feed.maxEntries ?? DEFAULT_CAPS[feed.format];
  const kept = cap === null || items.length <= cap ? items : mostPressing(items, cap);
  yield;
  const served = feed.aggregate ? aggregateItems(kept) : kept;
  yield;
  return { items: inListOrder(served), leftOut: items.length - kept.length, validUntil };
}

/**
 * The `cap` blocks a capped feed keeps: the highest criticality, then the newest (of blocks alike in both, those
 * met first). Each block ranked by one number, the cut found by sorting those numbers alone: sorting the blocks
 * with Date.parse in the comparator, and then by a hex text of each network for the list's order, took 1.4-1.6 s
 * for 100,000 blocks on the serving thread.
 */
function mostPressing(items: FeedItem[], cap: number): FeedItem[] {
  // Criticality 0-4 above the time in ms (below 2^43 until the year 2248): one number within 2^53.
  const rank = new Float64Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as FeedItem;
    rank[i] = item.block.criticality * 2 ** 43 + Math.max(0, (item.facts as Facts).since || 0);
  }
  const cut = Float64Array.from(rank).sort()[items.length - cap] as number;
  const kept: FeedItem[] = [];
  for (let i = 0; i < items.length; i++) if ((rank[i] as number) > cut) kept.push(items[i] as FeedItem);
  for (let i = 0; i < items.length && kept.length < cap; i++)
    if (rank[i] === cut) kept.push(items[i] as FeedItem);
  return kept;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Which 32-bit half of a 64-bit word is its high one, and its low one, on this machine. */
const HIGH = LITTLE_ENDIAN ? 1 : 0;
const LOW = 1 - HIGH;

/**
 * The items in a feed's list order (a stable body for the same blocks): IPv4 before IPv6, then by network
 * (networks.ts compareNetworks). IPv4 items by one native sort of 64-bit keys (the address, then the prefix, then
 * the item's index: no comparison called from the sort): sorting 100,000 items with compareNetworks took 100-120
 * ms of each render. IPv6 items by their indexes, compared off their words copied side by side.
 */
function inListOrder(items: FeedItem[]): FeedItem[] {
  const v4: FeedItem[] = [];
  const v6: FeedItem[] = [];
  for (const item of items) (item.network.family === 4 ? v4 : v6).push(item);
  const keys = new BigUint64Array(v4.length);
  // Each key's two 32-bit halves: the address above, the prefix (6 bits) and the index (26 bits: 67 million
  // items) below.
  const halves = new Uint32Array(keys.buffer);
  for (let i = 0; i < v4.length; i++) {
    const { bytes: b, prefix } = (v4[i] as FeedItem).network;
    halves[i * 2 + HIGH] = wordAt(b);
    halves[i * 2 + LOW] = ((prefix << 26) | i) >>> 0;
  }
  keys.sort();
  const out: FeedItem[] = new Array(items.length);
  for (let i = 0; i < v4.length; i++) out[i] = v4[(halves[i * 2 + LOW] as number) & 0x3ffffff] as FeedItem;
  // IPv6: each network's four words and prefix copied side by side once, then its indexes sorted by them (the
  // comparisons read those arrays, not networks from all over the heap).
  const words = new Uint32Array(v6.length * 5);
  for (let i = 0; i < v6.length; i++) {
    const { bytes: b, prefix } = (v6[i] as FeedItem).network;
    for (let k = 0; k < 4; k++) words[i * 5 + k] = wordAt(b, k * 4);
    words[i * 5 + 4] = prefix;
  }
  const order = Uint32Array.from({ length: v6.length }, (_, i) => i).sort((a, b) => {
    for (let k = 0; k < 5; k++) {
      const d = (words[a * 5 + k] as number) - (words[b * 5 + k] as number);
      if (d !== 0) return d;
    }
    return 0;
  });
  for (let i = 0; i < v6.length; i++) out[v4.length + i] = v6[order[i] as number] as FeedItem;
  return out;
}
