// `threatcol block list`: the active blocks (with --all the expired ones still kept too), newest first, and
// what an allow entry keeps out of the feeds.
import type { Command } from 'commander';
import type { Block } from '../../store/decisions.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import type { CliIo } from '../io.js';
import { printList } from '../table.js';

interface ListOptions extends CommonOptions {
  json?: boolean;
  all?: boolean;
}

export function registerBlockList(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('list')
      .description('list the blocks, newest first')
      .option('--json', 'print a JSON array')
      .option('--all', 'expired blocks too (kept until the engine cleans them up)'),
  ).action((options: ListOptions) => run(() => listBlocks(options, io)));
}

async function listBlocks(options: ListOptions, io: CliIo): Promise<number> {
  const [{ allowedBy }, { parseNetwork }] = await Promise.all([
    import('../../decisions/allowed.js'),
    import('../../decisions/networks.js'),
  ]);
  const loaded = await loadFromOptions(options, io);
  const state = await withStore(loaded, io, (store) => store.decisions.read());
  const now = Date.now();
  const rows = [...state.blocks.values()]
    .filter((b) => options.all || Date.parse(b.until) > now)
    .sort((a, b) => Date.parse(b.since) - Date.parse(a.since))
    .map((block: Block) => {
      const network = parseNetwork(block.address);
      const allowed = network ? allowedBy(network, loaded.config.blocklist.allow, state.allow, now) : null;
      return { ...block, active: Date.parse(block.until) > now, allowedBy: allowed };
    });
  return printList(io, rows, {
    json: options.json,
    none: options.all ? 'No blocks.' : 'No active blocks.',
    header: ['ADDRESS', 'RULE', 'REASON', 'SINCE', 'UNTIL', 'RECORDS', 'SENSORS', 'WHO', 'NOTE'],
    cells: (r) => [
      r.address,
      r.rule,
      r.reason,
      r.since,
      r.until,
      String(r.records),
      r.sensors.join(',') || '-',
      r.who ?? '-',
      r.allowedBy ? `kept out by allow ${r.allowedBy}` : r.active ? '' : 'expired',
    ],
  });
}
