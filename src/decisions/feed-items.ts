// Which blocks a feed serves now: active, of its address family, not covered by an allow entry, the highest
// criticality then the newest kept up to its cap; printed in address order (a stable body for the same blocks).
import type { Block, DecisionsState, FeedEntry } from '../store/decisions.js';
import { aggregateItems } from './aggregate.js';
import { allowedBy } from './allowed.js';
import { compareNetworks, type Network, parseNetwork } from './networks.js';
import { DEFAULT_CAPS, type FeedItem } from './render-feed.js';

export interface FeedSelection {
  items: FeedItem[];
  /** Active blocks the cap left out. */
  leftOut: number;
  /** The selection is stale from this instant (a block or allow entry in it expires). */
  validUntil: number;
}

/**
 * Each block's network, parsed once: a block is a value the decisions replace when it changes, and every feed's
 * every render (each minute for those that carry times left) read all of them again (1.2-2.2 µs a block, the most
 * of a 100,000-block selection).
 */
const NETWORKS = new WeakMap<Block, Network | null>();
function networkOf(block: Block): Network | null {
  let network = NETWORKS.get(block);
  if (network === undefined) {
    network = parseNetwork(block.address);
    NETWORKS.set(block, network);
  }
  return network;
}

export function selectFeedItems(
  feed: FeedEntry,
  state: DecisionsState,
  configuredAllow: readonly string[],
  now: number,
): FeedSelection {
  let validUntil = Number.POSITIVE_INFINITY;
  const items: FeedItem[] = [];
  for (const block of state.blocks.values()) {
    const until = Date.parse(block.until);
    if (until <= now) continue;
    const network = networkOf(block);
    if (network === null) continue;
    if (feed.family === 'ipv4' && network.family !== 4) continue;
    if (feed.family === 'ipv6' && network.family !== 6) continue;
    if (allowedBy(network, configuredAllow, state.allow, now) !== null) continue;
    validUntil = Math.min(validUntil, until);
    items.push({ block, network });
  }
  for (const entry of state.allow.values()) {
    const until = entry.until === null ? Number.NaN : Date.parse(entry.until);
    if (until > now) validUntil = Math.min(validUntil, until);
  }
  const cap = feed.maxEntries ?? DEFAULT_CAPS[feed.format];
  const kept = cap === null || items.length <= cap ? items : mostPressing(items, cap);
  const served = feed.aggregate ? aggregateItems(kept) : kept;
  return { items: served.sort(byNetwork), leftOut: items.length - kept.length, validUntil };
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
    const block = (items[i] as FeedItem).block;
    rank[i] = block.criticality * 2 ** 43 + Math.max(0, Date.parse(block.since));
  }
  const cut = Float64Array.from(rank).sort()[items.length - cap] as number;
  const kept: FeedItem[] = [];
  for (let i = 0; i < items.length; i++) if ((rank[i] as number) > cut) kept.push(items[i] as FeedItem);
  for (let i = 0; i < items.length && kept.length < cap; i++)
    if (rank[i] === cut) kept.push(items[i] as FeedItem);
  return kept;
}

/** A feed's list order (a stable body for the same blocks): IPv4 before IPv6, then by network (compareNetworks). */
const byNetwork = (a: FeedItem, b: FeedItem) => compareNetworks(a.network, b.network);
