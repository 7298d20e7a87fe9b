// Prometheus series of the blocklists (DESIGN 15), read from the engine and the feeds at scrape time: blocks
// in force and made per rule, addresses tracked and dropped, feed requests per feed and status, entries served
// and left out by a cap.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RunningEngine } from './engine.js';
import type { FeedService } from './feed-service.js';

/** The engine's series (where it runs: the single process, or the primary under --workers). */
export function registerEngineMetrics(registry: Registry, engine: () => RunningEngine | null): void {
  const gauge = (name: string, help: string, read: (e: RunningEngine) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect(this: Gauge) {
        const running = engine();
        this.set(running ? read(running) : 0);
      },
    });
  gauge('threatcol_blocks_active', 'blocks in force now (any rule or manual)', (e) => e.counts().active);
  gauge(
    'threatcol_decisions_tracked_addresses',
    'address units the decisions engine keeps counts for',
    (e) => e.counts().tracked,
  );
  new Counter({
    name: 'threatcol_decisions_dropped_addresses_total',
    help: 'address units dropped at blocklist.maxTracked (least recently seen first)',
    registers: [registry],
    collect(this: Counter) {
      this.reset();
      this.inc(engine()?.counts().dropped ?? 0);
    },
  });
  new Counter({
    name: 'threatcol_decisions_skipped_total',
    help: 'records a rule matched about an address not blocked: reason "private" (a private or special range, blocklist.blockPrivate false; one per rule matched), "allowed" (an allow entry covers it; one per rule whose thresholds it met) or "full" (blocklist.maxBlocks blocks held; one per rule whose thresholds it met)',
    labelNames: ['reason'],
    registers: [registry],
    collect(this: Counter) {
      this.reset();
      const counts = engine()?.counts();
      this.inc({ reason: 'private' }, counts?.skippedPrivate ?? 0);
      this.inc({ reason: 'allowed' }, counts?.skippedAllowed ?? 0);
      this.inc({ reason: 'full' }, counts?.skippedFull ?? 0);
    },
  });
  new Counter({
    name: 'threatcol_blocks_made_total',
    help: 'new blocks made by each rule (extensions not counted)',
    labelNames: ['rule'],
    registers: [registry],
    collect(this: Counter) {
      this.reset();
      for (const [rule, n] of Object.entries(engine()?.counts().blocksMade ?? {})) this.inc({ rule }, n);
    },
  });
}

/** The feeds' series (every serving process; summed over --workers, entries as the largest any worker serves). */
export function registerFeedMetrics(registry: Registry, feeds: FeedService): void {
  new Counter({
    name: 'threatcol_feed_requests_total',
    help: 'feed requests answered, by feed ("unknown": a name that is no feed) and status',
    labelNames: ['feed', 'status'],
    registers: [registry],
    collect(this: Counter) {
      this.reset();
      for (const r of feeds.report().requests) this.inc({ feed: r.feed, status: String(r.status) }, r.count);
    },
  });
  new Counter({
    name: 'threatcol_feed_renders_total',
    help: "times a feed's body was rendered: once per change to what it serves (and each minute for formats with remaining times), not per poll",
    labelNames: ['feed'],
    registers: [registry],
    collect(this: Counter) {
      this.reset();
      for (const f of feeds.report().feeds) this.inc({ feed: f.feed }, f.renders);
    },
  });
  for (const [name, help, field] of [
    ['threatcol_feed_entries', 'blocks a feed serves now', 'entries'],
    ['threatcol_feed_left_out', 'active blocks a feed leaves out because of its cap', 'leftOut'],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ['feed'],
      registers: [registry],
      aggregator: 'max',
      collect(this: Gauge) {
        this.reset();
        for (const f of feeds.report().feeds) this.set({ feed: f.feed }, f[field]);
      },
    });
  }
}
