// `threatcol allow remove CIDR`: the network may be blocked again (by newer records or by hand).
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { networkArgument } from './decisions-cli.js';

export function registerAllowRemove(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(parent.command('remove <network>').description('remove an allow entry')).action(
    (network: string, options: CommonOptions) => run(() => removeAllow(network, options, io)),
  );
}

async function removeAllow(text: string, options: CommonOptions, io: CliIo): Promise<number> {
  const { key } = networkArgument(text);
  const loaded = await loadFromOptions(options, io);
  await withStore(loaded, io, async (store) => {
    if (!(await store.decisions.read()).allow.has(key)) {
      throw new ThreatcolError(
        'DECISION_NOT_FOUND',
        `no allow entry of ${key} (threatcol allow list shows them; entries of blocklist.allow are changed in the configuration)`,
      );
    }
    await store.decisions.apply([{ kind: 'allow', key, value: null }]);
  });
  write(io.stdout, `Allow entry of ${key} removed.`);
  return 0;
}
