// Rendering a 100,000-entry feed in each format, in a process of its own (figure 17, figures-decisions.ts; with
// --expose-gc for the heap): `node --expose-gc --import tsx test/bench/decisions-figures.ts`. A quarter IPv6
// /64s, the rest IPv4 addresses, distinct and in a feed's order. Prints one JSON line per format: format,
// entries, bytes, ms (its first render), againMs (the same blocks again), heapMiB (what the heap grew by while
// the body was made and held).
import { type FeedItem, feedItemOf } from '../../src/decisions/feed-item.js';
import { renderFeed } from '../../src/decisions/render-feed.js';
import { FEED_FORMATS } from '../../src/store/decisions.js';

const ENTRIES = 100_000;
const now = Date.now();
// Distinct networks in a feed's order (feed-items.ts: IPv4 before IPv6, each by address), as renderFeed gets
// them: three quarters IPv4 addresses counted up from 198.18.0.0, then IPv6 /64s. (Until 2026-11-29 the IPv4
// addresses wrapped at 65,536, a quarter of them twice, interleaved with the IPv6 ones: the nftables render cut
// the duplicates apart on its slow path, which no feed takes, and measured that.)
const IPV4 = (ENTRIES * 3) / 4;
function itemsOf(): FeedItem[] {
  const items: FeedItem[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const j = i - IPV4;
    const address =
      i < IPV4
        ? `198.${18 + (i >> 16)}.${(i >> 8) & 0xff}.${i & 0xff}/32`
        : `2001:db8:${(j >> 8).toString(16)}:${(j & 0xff).toString(16)}::/64`;
    items.push(
      feedItemOf({
        address,
        rule: 'critical',
        reason: 'rule critical: criticality >= 4',
        since: new Date(now).toISOString(),
        until: new Date(now + 86_400_000).toISOString(),
        criticality: 4,
        records: 1,
        sensors: ['fw1'],
        who: null,
      }) as FeedItem,
    );
  }
  return items;
}
// Once untimed: the first render of a format also compiles its code.
for (const format of FEED_FORMATS) renderFeed(format, itemsOf().slice(0, 1000), now);
for (const format of FEED_FORMATS) {
  // New blocks each format: `ms` is a render of blocks no render printed before (a feed's first after start);
  // `againMs` the same blocks rendered again, as after a change to a few of them.
  const items = itemsOf();
  global.gc?.();
  const heap = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const body = renderFeed(format, items, now);
  const ms = performance.now() - t0;
  const grown = process.memoryUsage().heapUsed - heap;
  const t1 = performance.now();
  renderFeed(format, items, now);
  const againMs = performance.now() - t1;
  process.stdout.write(
    `${JSON.stringify({ format, entries: ENTRIES, bytes: Buffer.byteLength(body), ms, againMs, heapMiB: grown / 1048576 })}\n`,
  );
}
