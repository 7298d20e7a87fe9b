// `threatcol block add ADDRESS|CIDR --for DURATION --reason TEXT`: a manual block, in every feed within a
// second; 0.0.0.0/0, ::/0 are refused, private ranges and networks wider than an IPv4 /8 or an IPv6 /16 need
// --force.
import type { Command } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { forDuration, networkArgument, whoAmI } from './decisions-cli.js';

interface BlockAddOptions extends CommonOptions {
  for: string;
  reason: string;
  force?: boolean;
}

export function registerBlockAdd(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('add <network>')
      .description('block an address or CIDR by hand, in every feed within a second')
      .requiredOption('--for <duration>', 'how long, e.g. 24h, 7d')
      .requiredOption('--reason <text>', 'why (shown in block list and json feeds)')
      .option(
        '--force',
        'block a private, loopback or link-local range, or one wider than an IPv4 /8 or IPv6 /16, too',
      ),
  ).action((network: string, options: BlockAddOptions) => run(() => addBlock(network, options, io)));
}

/** The widest blocks `block add` makes without --force. */
const WIDEST_IPV4 = 8;
const WIDEST_IPV6 = 16;

async function addBlock(text: string, options: BlockAddOptions, io: CliIo): Promise<number> {
  const { isPrivate } = await import('../../decisions/networks.js');
  const { network, key } = networkArgument(text);
  if (network.prefix === 0) throw new ThreatcolError('INVALID_ARGUMENT', `${key} would block every address`);
  // Wider than an IPv4 /8 or an IPv6 /16 (2000::/3 is every global IPv6 unicast address): a slip of the prefix
  // more often than a decision.
  const widest = network.family === 4 ? WIDEST_IPV4 : WIDEST_IPV6;
  if (network.prefix < widest && !options.force) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `${key} is wider than an IPv${network.family} /${widest}; add --force to block it anyway`,
    );
  }
  if (isPrivate(network) && !options.force) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `${key} is (or covers) a private, loopback, link-local or other non-public range; add --force to block it anyway`,
    );
  }
  const ms = forDuration(options.for);
  const loaded = await loadFromOptions(options, io);
  const now = Date.now();
  const until = new Date(now + ms).toISOString();
  const { allowed, replaced } = await withStore(loaded, io, async (store) => {
    // The block it replaces, when one is in force: said, so a shorter block by hand over a longer one is seen.
    const before = (await store.decisions.read()).blocks.get(key);
    await store.decisions.apply([
      {
        kind: 'block',
        key,
        value: {
          address: key,
          rule: 'manual',
          reason: options.reason,
          since: new Date(now).toISOString(),
          until,
          criticality: 4,
          records: 0,
          sensors: [],
          who: whoAmI(io.env),
        },
      },
    ]);
    const { allowedBy } = await import('../../decisions/allowed.js');
    return {
      allowed: allowedBy(network, loaded.config.blocklist.allow, (await store.decisions.read()).allow, now),
      replaced: before !== undefined && Date.parse(before.until) > now ? before : null,
    };
  });
  const was =
    replaced === null
      ? ''
      : ` It replaces the block ${replaced.rule === 'manual' ? 'by hand' : `of rule ${replaced.rule}`} that was to end ${replaced.until}.`;
  write(
    io.stdout,
    allowed === null
      ? `Blocked ${key} until ${until}.${was}`
      : `Blocked ${key} until ${until}, but kept out of every feed by allow ${allowed} while that stands.${was}`,
  );
  return 0;
}
