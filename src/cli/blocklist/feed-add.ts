// `threatcol feed add NAME --format F`: a feed of the active blocks for one firewall, with its own user name
// and password (printed once, only its hash stored).
import { type Command, Option } from 'commander';
import { ThreatcolError } from '../../errors.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write, writeJson } from '../io.js';
import { checkFeedName, feedUrl, networkArgument } from './decisions-cli.js';

const FORMATS = ['paloalto', 'fortinet', 'plain', 'mikrotik', 'nftables', 'json'] as const;

interface FeedAddOptions extends CommonOptions {
  format: string;
  maxEntries?: string;
  ipv4Only?: boolean;
  ipv6Only?: boolean;
  from?: string[];
  aggregate?: boolean;
  json?: boolean;
}

export function registerFeedAdd(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('add <name>')
      .description('add a feed of the active blocks and print its URL and credentials (the password once)')
      .addOption(
        new Option('--format <format>', "the firewall's format").choices(FORMATS).makeOptionMandatory(),
      )
      .option(
        '--max-entries <n>',
        'serve at most this many blocks (default: paloalto 50000, fortinet 128000)',
      )
      .option('--ipv4-only', 'only IPv4 blocks')
      .option('--ipv6-only', 'only IPv6 blocks')
      .option('--aggregate', 'merge neighbouring blocks into the fewest CIDRs')
      .option(
        '--from <cidr...>',
        'serve the feed only to clients in these networks (others get 403)',
        (value: string, previous: string[] = []) => [...previous, value],
      )
      .option('--json', 'print {"name", "format", "url", "username", "password"} as JSON'),
  ).action((name: string, options: FeedAddOptions) => run(() => addFeed(name, options, io)));
}

async function addFeed(name: string, options: FeedAddOptions, io: CliIo): Promise<number> {
  checkFeedName(name);
  const format = options.format as (typeof FORMATS)[number];
  if (!FORMATS.includes(format)) {
    throw new ThreatcolError(
      'USAGE',
      `--format must be one of ${FORMATS.join(', ')}, not "${options.format}"`,
    );
  }
  if (options.ipv4Only && options.ipv6Only)
    throw new ThreatcolError('USAGE', '--ipv4-only and --ipv6-only exclude each other');
  let maxEntries: number | null = null;
  if (options.maxEntries !== undefined) {
    if (!/^[1-9][0-9]{0,8}$/.test(options.maxEntries)) {
      throw new ThreatcolError(
        'USAGE',
        `--max-entries must be a whole number from 1, not "${options.maxEntries}"`,
      );
    }
    maxEntries = Number(options.maxEntries);
  }
  const from = (options.from ?? []).map((text) => networkArgument(text).key);
  const { generateKey, hashKey } = await import('../../keys.js');
  const loaded = await loadFromOptions(options, io);
  const password = generateKey();
  await withStore(loaded, io, async (store) => {
    const state = await store.decisions.read();
    if (state.feeds.has(name)) {
      throw new ThreatcolError(
        'FEED_EXISTS',
        `a feed named "${name}" already exists; for a new password: threatcol feed rotate ${name}`,
      );
    }
    await store.decisions.apply([
      {
        kind: 'feed',
        key: name,
        value: {
          name,
          format,
          passwordHash: hashKey(password),
          maxEntries,
          family: options.ipv4Only ? 'ipv4' : options.ipv6Only ? 'ipv6' : 'any',
          ...(from.length > 0 ? { from } : {}),
          ...(options.aggregate ? { aggregate: true } : {}),
          createdAt: new Date().toISOString(),
          rotatedAt: null,
        },
      },
    ]);
  });
  const url = feedUrl(loaded.config, name);
  if (options.json) {
    writeJson(io.stdout, { name, format, url, username: name, password });
    return 0;
  }
  write(
    io.stdout,
    [
      `Feed "${name}" added (format ${format}).`,
      `  URL:       ${url}`,
      `  User name: ${name}`,
      `  Password:  ${password}`,
      'The password is shown only now; threatcol keeps its hash. A new one: threatcol feed rotate NAME.',
      "The firewall must trust the collector's certificate (tls.cert, or the self-signed one in the data directory).",
    ].join('\n'),
  );
  return 0;
}
