// One entry of a feed: a block and its network (DESIGN 15), as the selection, merging and rendering pass it on;
// and what a render reads of each block, worked out once per block.
import type { Block } from '../store/decisions.js';
import { listEntry, type Network, parseNetwork } from './networks.js';

export interface FeedItem {
  block: Block;
  network: Network;
  /** The block's facts when the item is the whole block (null: a part of it, or a merge of blocks). */
  facts: Facts | null;
  /** How many blocks a merged entry (`--aggregate`) stands for; absent: one. */
  merged?: number;
}

/**
 * What every render reads of a block: its network, its times in ms, its list entry's text. A block is a value the
 * decisions replace when it changes, so these are worked out once per block, not at every render of every feed
 * (each minute for the formats that carry the time left): a 100,000-block nftables feed spent 40-50 ms of each
 * render on Date.parse of the ends and as much on printing the addresses again.
 */
export interface Facts {
  network: Network | null;
  until: number;
  since: number;
  /** The network's list entry (listEntry), made at the first render that prints it. */
  entry: string | null;
}

const FACTS = new WeakMap<Block, Facts>();

export function factsOf(block: Block): Facts {
  let facts = FACTS.get(block);
  if (facts === undefined) {
    facts = {
      network: parseNetwork(block.address),
      until: Date.parse(block.until),
      since: Date.parse(block.since),
      entry: null,
    };
    FACTS.set(block, facts);
  }
  return facts;
}

/** The item of a whole block, or null when its address is no network (a damaged entry, left out of every feed). */
export function feedItemOf(block: Block): FeedItem | null {
  const facts = factsOf(block);
  return facts.network === null ? null : { block, network: facts.network, facts };
}

/** When the block ends (epoch ms; NaN when its text is no time). */
export const untilOf = (block: Block): number => factsOf(block).until;

/** When the item's block ends (epoch ms). */
export const itemUntil = (item: FeedItem): number => (item.facts ?? factsOf(item.block)).until;

/** The item's list entry: its block's own, printed once, unless the item is a part of it or a merge. */
export function entryOf(item: FeedItem): string {
  const facts = item.facts;
  if (facts === null) return listEntry(item.network);
  facts.entry ??= listEntry(item.network);
  return facts.entry;
}
