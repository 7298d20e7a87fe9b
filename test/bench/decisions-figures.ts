// Rendering a 100,000-entry feed in each format, in a process of its own (figure 17, figures-decisions.ts; with
// --expose-gc for the heap): `node --expose-gc --import tsx test/bench/decisions-figures.ts`. A quarter IPv6
// /64s, the rest IPv4 addresses. Prints one JSON line per format: format, entries, bytes, ms, heapMiB (what
// the heap grew by while the body was made and held).
import { parseNetwork } from '../../src/decisions/networks.js';
import { type FeedItem, renderFeed } from '../../src/decisions/render-feed.js';
import { FEED_FORMATS } from '../../src/store/decisions.js';

const ENTRIES = 100_000;
const now = Date.now();
const items: FeedItem[] = [];
for (let i = 0; i < ENTRIES; i++) {
  const address =
    i % 4 === 0
      ? `2001:db8:${(i >> 8).toString(16)}:${(i & 0xff).toString(16)}::/64`
      : `198.18.${(i >> 8) & 0xff}.${i & 0xff}/32`;
  items.push({
    network: parseNetwork(address) as FeedItem['network'],
    block: {
      address,
      rule: 'critical',
      reason: 'rule critical: criticality >= 4',
      since: new Date(now).toISOString(),
      until: new Date(now + 86_400_000).toISOString(),
      criticality: 4,
      records: 1,
      sensors: ['fw1'],
      who: null,
    },
  });
}
// Once untimed: the first render of a format also compiles its code.
for (const format of FEED_FORMATS) renderFeed(format, items.slice(0, 1000), now);
for (const format of FEED_FORMATS) {
  global.gc?.();
  const heap = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const body = renderFeed(format, items, now);
  const ms = performance.now() - t0;
  const grown = process.memoryUsage().heapUsed - heap;
  process.stdout.write(
    `${JSON.stringify({ format, entries: ENTRIES, bytes: Buffer.byteLength(body), ms, heapMiB: grown / 1048576 })}\n`,
  );
}
