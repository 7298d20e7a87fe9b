// Which blocks a feed serves now: active, of its address family, not covered by an allow entry, the highest
// criticality then the newest kept up to its cap; printed in address order (a stable body for the same blocks).
import type { DecisionsState, FeedEntry } from '../store/decisions.js';
import { aggregateItems } from './aggregate.js';
import { allowedBy } from './allowed.js';
import { type Network, parseNetwork } from './networks.js';
import { DEFAULT_CAPS, type FeedItem } from './render-feed.js';

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
  let validUntil = Number.POSITIVE_INFINITY;
  const items: FeedItem[] = [];
  for (const block of state.blocks.values()) {
    const until = Date.parse(block.until);
    if (until <= now) continue;
    const network = parseNetwork(block.address);
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
  items.sort(
    (a, b) =>
      b.block.criticality - a.block.criticality || Date.parse(b.block.since) - Date.parse(a.block.since),
  );
  const cap = feed.maxEntries ?? DEFAULT_CAPS[feed.format];
  const kept = cap === null ? items : items.slice(0, cap);
  const served = feed.aggregate ? aggregateItems(kept) : kept;
  return { items: sortForList(served), leftOut: items.length - kept.length, validUntil };
}

function sortForList(items: FeedItem[]): FeedItem[] {
  const key = (n: Network) =>
    `${n.family}${Buffer.from(n.bytes).toString('hex')}${n.prefix.toString().padStart(3, '0')}`;
  return items.sort((a, b) => (key(a.network) < key(b.network) ? -1 : 1));
}
