// `threatcol allow list`: the networks never blocked: the configuration's (blocklist.allow) and those added
// with `allow add`.
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import type { CliIo } from '../io.js';
import { printList } from '../table.js';

interface ListOptions extends CommonOptions {
  json?: boolean;
}

export function registerAllowList(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('list')
      .description('list the networks never blocked')
      .option('--json', 'print a JSON array'),
  ).action((options: ListOptions) => run(() => listAllow(options, io)));
}

async function listAllow(options: ListOptions, io: CliIo): Promise<number> {
  const loaded = await loadFromOptions(options, io);
  const state = await withStore(loaded, io, (store) => store.decisions.read());
  const now = Date.now();
  const rows = [
    ...loaded.config.blocklist.allow.map((network) => ({
      network,
      reason: 'configuration (blocklist.allow)',
      since: null as string | null,
      until: null as string | null,
      who: null as string | null,
    })),
    ...[...state.allow.values()]
      .filter((e) => e.until === null || Date.parse(e.until) > now)
      .sort((a, b) => a.network.localeCompare(b.network)),
  ];
  return printList(io, rows, {
    json: options.json,
    none: 'No allow entries (private ranges are never blocked unless blocklist.blockPrivate).',
    header: ['NETWORK', 'REASON', 'SINCE', 'UNTIL', 'WHO'],
    cells: (r) => [r.network, r.reason, r.since ?? '-', r.until ?? 'for good', r.who ?? '-'],
  });
}
