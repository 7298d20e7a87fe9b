// `threatcol block remove ADDRESS|CIDR`: the block leaves every feed within a second, and the records that
// made it do not make it again (only newer records count).
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { networkArgument } from './decisions-cli.js';

export function registerBlockRemove(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('remove <network>')
      .description('remove a block; only records newer than this count again'),
  ).action((network: string, options: CommonOptions) => run(() => removeBlock(network, options, io)));
}

async function removeBlock(text: string, options: CommonOptions, io: CliIo): Promise<number> {
  const { network, key: canonical } = networkArgument(text);
  const loaded = await loadFromOptions(options, io);
  let key = canonical;
  await withStore(loaded, io, async (store) => {
    const { blocks } = await store.decisions.read();
    // A block keyed by other text than today's canonical form (a mapped IPv6 address stored as IPv6 before such
    // addresses were read as IPv4): removed by the text block list shows.
    if (!blocks.has(key) && blocks.has(text.trim())) key = text.trim();
    if (!blocks.has(key)) {
      // An address of a wider block (an IPv6 /64 unit, a CIDR added by hand): name the block to remove.
      const { overlaps, parseNetwork } = await import('../../decisions/networks.js');
      const covering = [...blocks.keys()].filter((other) => {
        const n = parseNetwork(other);
        return n !== null && n.prefix < network.prefix && overlaps(n, network);
      });
      const hint =
        covering.length > 0
          ? `; it lies in the block of ${covering.join(', ')} (threatcol block remove ${covering[0]})`
          : ' (threatcol block list --all shows them)';
      throw new ThreatcolError('DECISION_NOT_FOUND', `no block of ${key}${hint}`);
    }
    await store.decisions.apply([
      { kind: 'block', key, value: null },
      { kind: 'cleared', key, value: { address: key, at: new Date().toISOString() } },
    ]);
  });
  write(io.stdout, `Block of ${key} removed.`);
  return 0;
}
