// `threatcol allow add CIDR --reason TEXT [--for DURATION]`: a network never blocked; blocks it covers leave
// every feed within a second.
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { forDuration, networkArgument, whoAmI } from './decisions-cli.js';

interface AllowAddOptions extends CommonOptions {
  reason: string;
  for?: string;
}

export function registerAllowAdd(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('add <network>')
      .description('never block an address or CIDR (blocks it covers leave the feeds)')
      .requiredOption('--reason <text>', 'why (shown in allow list)')
      .option('--for <duration>', 'only this long, e.g. 7d (default: for good)'),
  ).action((network: string, options: AllowAddOptions) => run(() => addAllow(network, options, io)));
}

async function addAllow(text: string, options: AllowAddOptions, io: CliIo): Promise<number> {
  const { key } = networkArgument(text);
  const ms = options.for === undefined ? null : forDuration(options.for);
  const loaded = await loadFromOptions(options, io);
  const now = Date.now();
  const until = ms === null ? null : new Date(now + ms).toISOString();
  await withStore(loaded, io, (store) =>
    store.decisions.apply([
      {
        kind: 'allow',
        key,
        value: {
          network: key,
          reason: options.reason,
          since: new Date(now).toISOString(),
          until,
          who: whoAmI(io.env),
        },
      },
    ]),
  );
  write(io.stdout, `Allowed ${key}${until ? ` until ${until}` : ''}: never blocked.`);
  return 0;
}
