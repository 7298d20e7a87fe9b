// The order a feed lists its items in (a stable body for the same blocks): IPv4 before IPv6, then by network
// (networks.ts compareNetworks: the address's bytes, then the prefix, the wider first), equal networks as met.
// A radix sort of the items' indexes, least significant digit first, each pass stable: the prefix, then the
// address 16 bits at a time from its last word to its first, then the family. Every pass is two loops over the
// items that yield every ITEMS_PER_STEP (steps.ts): a 150,000-entry feed was 19-25 ms in one piece as a native
// sort of 64-bit keys (and 40 ms for 100,000 IPv6 /64s as a comparison sort), the one step of its render that
// did not shrink with the slice. A pass whose digit is the same for every item (an IPv4 address's missing words,
// a feed of one prefix or one family) moves nothing.
import type { FeedItem } from './feed-item.js';
import { wordAt } from './networks.js';
import { ITEMS_PER_STEP, type Steps } from './steps.js';

/** A pass's digit takes one of this many values (16 bits; a prefix or a family fewer). */
const RADIX = 0x10000;

/** A pass's digit: the prefix, the family, or a half of the address's word k (WORD + 2k: low, + 1: high). */
const PREFIX = 0;
const FAMILY = 1;
const WORD = 2;

/**
 * Fewer items than this are sorted by comparing them, in one step: each radix pass clears and sums its 65,536
 * counts, about 0.7 ms for ten passes whatever the items.
 */
const RADIX_FROM = 2048;

/** `items` in list order (a new array), in steps. `radixFrom`: see RADIX_FROM (tests take both ways). */
export function* listOrderSteps(items: readonly FeedItem[], radixFrom = RADIX_FROM): Steps<FeedItem[]> {
  const n = items.length;
  // Each item's address as four words (an IPv4 address its first, the rest 0), its prefix, and its family.
  const words = new Uint32Array(n * 4);
  const prefixes = new Uint8Array(n);
  const families = new Uint8Array(n);
  let v6 = false;
  for (let from = 0; from < n; from += ITEMS_PER_STEP) {
    if (from > 0) yield;
    for (let i = from; i < Math.min(n, from + ITEMS_PER_STEP); i++) {
      const { family, bytes, prefix } = (items[i] as FeedItem).network;
      words[i * 4] = wordAt(bytes);
      if (family === 6) {
        v6 = true;
        families[i] = 1;
        words[i * 4 + 1] = wordAt(bytes, 4);
        words[i * 4 + 2] = wordAt(bytes, 8);
        words[i * 4 + 3] = wordAt(bytes, 12);
      }
      prefixes[i] = prefix;
    }
  }
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n < radixFrom) {
    order.sort(
      (a, b) =>
        (families[a] as number) - (families[b] as number) ||
        (words[a * 4] as number) - (words[b * 4] as number) ||
        (words[a * 4 + 1] as number) - (words[b * 4 + 1] as number) ||
        (words[a * 4 + 2] as number) - (words[b * 4 + 2] as number) ||
        (words[a * 4 + 3] as number) - (words[b * 4 + 3] as number) ||
        (prefixes[a] as number) - (prefixes[b] as number) ||
        a - b,
    );
    return Array.from(order, (i) => items[i] as FeedItem);
  }
  let spare = new Uint32Array(n);
  const digits = new Uint16Array(n);
  const counts = new Uint32Array(RADIX);
  // Least significant first: the prefix, each word's low half then its high half from the last word (an IPv4
  // feed's first word alone), the family.
  const passes = [PREFIX];
  for (let k = v6 ? 3 : 0; k >= 0; k--) passes.push(WORD + 2 * k, WORD + 2 * k + 1);
  passes.push(FAMILY);
  for (const pass of passes) {
    counts.fill(0);
    const word = (pass - WORD) >> 1;
    const shift = (pass - WORD) & 1 ? 16 : 0;
    for (let from = 0; from < n; from += ITEMS_PER_STEP) {
      if (from > 0) yield;
      const to = Math.min(n, from + ITEMS_PER_STEP);
      for (let i = from; i < to; i++) {
        const d =
          pass === PREFIX
            ? (prefixes[i] as number)
            : pass === FAMILY
              ? (families[i] as number)
              : ((words[i * 4 + word] as number) >>> shift) & 0xffff;
        digits[i] = d;
        counts[d] = (counts[d] as number) + 1;
      }
    }
    // The same digit for every item: nothing moves.
    if (n === 0 || counts[digits[0] as number] === n) continue;
    // Each digit's first place, then the indexes in their order so far, each to its digit's next place.
    let at = 0;
    for (let d = 0; d < RADIX; d++) {
      const c = counts[d] as number;
      counts[d] = at;
      at += c;
    }
    for (let from = 0; from < n; from += ITEMS_PER_STEP) {
      yield;
      for (let i = from; i < Math.min(n, from + ITEMS_PER_STEP); i++) {
        const index = order[i] as number;
        const d = digits[index] as number;
        spare[counts[d] as number] = index;
        counts[d] = (counts[d] as number) + 1;
      }
    }
    [order, spare] = [spare, order];
  }
  const out: FeedItem[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = items[order[i] as number] as FeedItem;
  return out;
}
