// `threatcol allow add CIDR --reason TEXT [--for DURATION] [--force]`: a network never blocked; blocks it covers
// leave every feed within a second. A whole family (0.0.0.0/0, ::/0) needs --force.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { forDuration, networkArgument, whoAmI } from './decisions-cli.js';

interface AllowAddOptions extends CommonOptions {
  reason: string;
  for?: string;
  force?: boolean;
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
      .option('--for <duration>', 'only this long, e.g. 7d (default: for good)')
      .option('--force', 'allow every address of a family (0.0.0.0/0, ::/0) too: no rule blocks any of it'),
  ).action((network: string, options: AllowAddOptions) => run(() => addAllow(network, options, io)));
}

async function addAllow(text: string, options: AllowAddOptions, io: CliIo): Promise<number> {
  const { network, key } = networkArgument(text);
  // Allowing a whole family turns every rule off for it: a typo's cost, unless asked for.
  if (network.prefix === 0 && !options.force) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `${key} would allow every address: no rule could block any; add --force to allow it anyway (or remove blocklist.rules)`,
    );
  }
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
