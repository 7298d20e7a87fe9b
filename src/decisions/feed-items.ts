// Which blocks a feed serves now: active, of its address family, not covered by an allow entry, the highest
// criticality then the newest kept up to its cap; printed in address order (a stable body for the same blocks).
import type { Block, DecisionsState, FeedEntry } from '../store/decisions.js';
import { aggregateSteps } from './aggregate.js';
import { allowedBy } from './allowed.js';
import { type FeedItem, factsOf } from './feed-item.js';
import { listOrderSteps } from './list-order.js';
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
 * cap's choice, `--aggregate`'s merge and the list's order (list-order.ts) are in steps too.
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
  if (feed.aggregate && cap !== null && items.length > cap) {
    // The cap counts what the firewall holds: an `--aggregate` feed's merged entries. Every block when they fit;
    // otherwise the `cap` most pressing entries, each ranked as its merged block (the highest criticality it
    // holds), kept in list order. Never the `cap` most pressing blocks merged: those could merge into a few
    // entries and leave the rest of the firewall's list empty.
    const all = yield* aggregateSteps(items);
    if (all.length <= cap) return { items: all, leftOut: 0, validUntil };
    const kept = yield* mostPressingSteps(all, cap);
    let served = 0;
    for (const item of kept) served += item.merged ?? 1;
    return { items: kept, leftOut: items.length - served, validUntil };
  }
  const kept = cap === null || items.length <= cap ? items : yield* mostPressingSteps(items, cap);
  yield;
  // `--aggregate`'s merge sorts the blocks itself and makes its entries in list order: not sorted twice.
  const listed = feed.aggregate ? yield* aggregateSteps(kept) : yield* listOrderSteps(kept);
  return { items: listed, leftOut: items.length - kept.length, validUntil };
}

/**
 * The `cap` items a capped feed keeps, in steps and in the order met: the highest criticality, then the
 * newest (of items alike in both, those met first). Each ranked by one number, criticality above its time in
 * ms, as two words (the time is below 2^43 until the year 2248: criticality and the time's top 11 bits, then its low 32 bits); the
 * cap's last rank found by counting, 16 bits at a time from the top, how many ranks lie above each value (a radix
 * select: three passes over the blocks, each in steps). Sorting the blocks with Date.parse in the comparator took
 * 1.4-1.6 s for 100,000 blocks on the serving thread, and a native sort of their ranks 10 ms in one piece.
 */
function* mostPressingSteps(items: FeedItem[], cap: number): Steps<FeedItem[]> {
  const n = items.length;
  const high = new Uint32Array(n);
  const low = new Uint32Array(n);
  for (let from = 0; from < n; from += ITEMS_PER_STEP) {
    if (from > 0) yield;
    for (let i = from; i < Math.min(n, from + ITEMS_PER_STEP); i++) {
      const item = items[i] as FeedItem;
      // A merged entry (no facts of its own) by its block's: its start is the newest of those it holds.
      const since = Math.min(2 ** 43 - 1, Math.max(0, (item.facts ?? factsOf(item.block)).since || 0));
      high[i] = item.block.criticality * 2 ** 11 + Math.floor(since / 2 ** 32);
      low[i] = since % 2 ** 32;
    }
  }
  // The cap's last rank, a digit at a time: the rank's high word, then its low word's two halves. `left`: how
  // many of the ranks kept lie at or below the digits found so far.
  const counts = new Uint32Array(0x10000);
  const digitOf = [
    (i: number) => high[i] as number,
    (i: number) => (low[i] as number) >>> 16,
    (i: number) => (low[i] as number) & 0xffff,
  ];
  const found = [-1, -1, -1];
  let left = cap;
  for (let pass = 0; pass < 3; pass++) {
    counts.fill(0);
    const digit = digitOf[pass] as (i: number) => number;
    for (let from = 0; from < n; from += ITEMS_PER_STEP) {
      yield;
      for (let i = from; i < Math.min(n, from + ITEMS_PER_STEP); i++) {
        if (pass > 0 && high[i] !== found[0]) continue;
        if (pass > 1 && (low[i] as number) >>> 16 !== found[1]) continue;
        const d = digit(i);
        counts[d] = (counts[d] as number) + 1;
      }
    }
    let d = 0xffff;
    while (d > 0 && (counts[d] as number) < left) left -= counts[d--] as number;
    found[pass] = d;
  }
  const cutHigh = found[0] as number;
  const cutLow = (((found[1] as number) << 16) | (found[2] as number)) >>> 0;
  // Above the cut, then as many at the cut as the cap leaves room for, the first met.
  const kept: FeedItem[] = [];
  let atCut = left;
  for (let from = 0; from < n; from += ITEMS_PER_STEP) {
    yield;
    for (let i = from; i < Math.min(n, from + ITEMS_PER_STEP); i++) {
      const h = high[i] as number;
      const l = low[i] as number;
      if (h > cutHigh || (h === cutHigh && l > cutLow)) kept.push(items[i] as FeedItem);
      else if (h === cutHigh && l === cutLow && atCut > 0) {
        kept.push(items[i] as FeedItem);
        atCut--;
      }
    }
  }
  return kept;
}
