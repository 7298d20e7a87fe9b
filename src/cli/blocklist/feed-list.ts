// `threatcol feed list`: each feed, its format, the blocks it serves now and those its cap leaves out.
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import type { CliIo } from '../io.js';
import { printList } from '../table.js';
import { feedUrl } from './decisions-cli.js';

interface ListOptions extends CommonOptions {
  json?: boolean;
}

export function registerFeedList(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('list')
      .description('list the feeds: format, entries served and left out by the cap, last fetch')
      .option('--json', 'print a JSON array'),
  ).action((options: ListOptions) => run(() => listFeeds(options, io)));
}

async function listFeeds(options: ListOptions, io: CliIo): Promise<number> {
  const [{ selectFeedItems }, { DEFAULT_CAPS }] = await Promise.all([
    import('../../decisions/feed-items.js'),
    import('../../decisions/render-feed.js'),
  ]);
  const loaded = await loadFromOptions(options, io);
  const state = await withStore(loaded, io, (store) => store.decisions.read());
  const now = Date.now();
  const rows = [...state.feeds.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((feed) => {
      const selected = selectFeedItems(feed, state, loaded.config.blocklist.allow, now);
      return {
        name: feed.name,
        format: feed.format,
        url: feedUrl(loaded.config, feed.name),
        family: feed.family,
        maxEntries: feed.maxEntries ?? DEFAULT_CAPS[feed.format],
        entries: selected.items.length,
        leftOut: selected.leftOut,
        from: feed.from ?? null,
        aggregate: feed.aggregate ?? false,
        createdAt: feed.createdAt,
        rotatedAt: feed.rotatedAt,
        lastFetch: state.fetches.get(feed.name) ?? null,
      };
    });
  return printList(io, rows, {
    json: options.json,
    none: 'No feeds. Add one with: threatcol feed add NAME --format paloalto',
    header: ['NAME', 'FORMAT', 'ENTRIES', 'LEFT OUT', 'CAP', 'LAST FETCH', 'URL'],
    cells: (r) => [
      r.name,
      r.format,
      String(r.entries),
      String(r.leftOut),
      r.maxEntries === null ? '-' : String(r.maxEntries),
      r.lastFetch ? `${r.lastFetch.at} ${r.lastFetch.address} ${r.lastFetch.status}` : 'never',
      r.url,
    ],
  });
}
