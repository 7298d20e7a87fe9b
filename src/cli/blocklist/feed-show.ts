// `threatcol feed show NAME [--firewall]`: one feed, and with --firewall the setup to paste into the firewall
// that pulls it (PAN-OS, FortiGate, RouterOS, a Linux host with nftables).
import type { Command } from 'commander';
import type { FeedEntry } from '../../store/decisions.js';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write, writeJson } from '../io.js';
import { checkFeedName, feedNotFound, feedUrl } from './decisions-cli.js';

interface ShowOptions extends CommonOptions {
  firewall?: boolean;
  json?: boolean;
}

export function registerFeedShow(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('show <name>')
      .description('show a feed; with --firewall, the setup to paste into its firewall')
      .option('--firewall', "print the firewall's setup for the feed's format")
      .option('--json', 'print the feed as JSON (without its password hash)'),
  ).action((name: string, options: ShowOptions) => run(() => showFeed(name, options, io)));
}

async function showFeed(name: string, options: ShowOptions, io: CliIo): Promise<number> {
  checkFeedName(name);
  const loaded = await loadFromOptions(options, io);
  const feed = await withStore(loaded, io, async (store) => (await store.decisions.read()).feeds.get(name));
  if (!feed) throw feedNotFound(name);
  const url = feedUrl(loaded.config, name);
  const { passwordHash: _hash, ...shown } = feed;
  if (options.json) {
    writeJson(io.stdout, { ...shown, url, username: name });
    return 0;
  }
  const lines = [
    `Feed "${name}"`,
    `  Format:    ${feed.format}`,
    `  URL:       ${url}`,
    `  User name: ${name}`,
    `  Family:    ${feed.family}`,
    `  Cap:       ${capText(feed, (await import('../../decisions/render-feed.js')).DEFAULT_CAPS)}`,
    `  From:      ${feed.from && feed.from.length > 0 ? `${feed.from.join(', ')} (403 elsewhere)` : 'any address'}`,
    `  Aggregate: ${feed.aggregate ? 'yes' : 'no'}`,
    `  Created:   ${feed.createdAt}${feed.rotatedAt ? `, password rotated ${feed.rotatedAt}` : ''}`,
  ];
  write(io.stdout, lines);
  // The setup text is the program's own lines, with only the feed's checked name and URL in it.
  if (options.firewall) write(io.stdout, `\n${firewallSetup(feed, url)}`);
  return 0;
}

/** The most entries served: `--max-entries`, else the format's default (the firewall's limit), else none. */
function capText(feed: FeedEntry, caps: Record<FeedEntry['format'], number | null>): string {
  if (feed.maxEntries !== null) return String(feed.maxEntries);
  const cap = caps[feed.format];
  return cap === null ? 'none' : `${cap} (the format's default)`;
}

/** Paste-ready setup per format; PASSWORD stands for the password shown by `feed add` or `feed rotate`. */
export function firewallSetup(feed: FeedEntry, url: string): string {
  const host = new URL(url).host;
  switch (feed.format) {
    case 'paloalto':
      return [
        '# PAN-OS: Objects > External Dynamic Lists > Add: Type "IP List", Source the URL, Server Authentication',
        "# with a certificate profile holding the collector's CA, Client Authentication with user name and",
        '# password, Repeat "Every five minutes". Or in the CLI (configure mode):',
        `set external-list threatcol-${feed.name} type ip url ${url}`,
        `set external-list threatcol-${feed.name} type ip certificate-profile threatcol-ca`,
        `set external-list threatcol-${feed.name} type ip auth username ${feed.name} password PASSWORD`,
        `set external-list threatcol-${feed.name} type ip recurring five-minute`,
        '# Then use it as the source of a deny rule. PAN-OS stops enforcing a list it cannot authenticate to:',
        '# check "feed list" after a password rotation.',
      ].join('\n');
    case 'fortinet':
      return [
        'config system external-resource',
        `    edit "threatcol-${feed.name}"`,
        '        set type address',
        `        set resource "${url}"`,
        `        set username "${feed.name}"`,
        '        set password PASSWORD',
        '        set refresh-rate 5',
        '    next',
        'end',
        "# Use it as a source address in a deny policy. The FortiGate must trust the collector's certificate.",
      ].join('\n');
    case 'mikrotik':
      return [
        '/system scheduler add name=threatcol-' +
          feed.name +
          ' interval=5m on-event="/tool fetch url=\\"' +
          url +
          '\\" user=' +
          feed.name +
          ' password=PASSWORD dst-path=threatcol.rsc mode=https check-certificate=yes; :delay 5s; /import file-name=threatcol.rsc"',
        '/ip firewall raw add chain=prerouting src-address-list=threatcol action=drop comment="threatcol blocklist"',
        '/ipv6 firewall raw add chain=prerouting src-address-list=threatcol action=drop comment="threatcol blocklist"',
        "# Import the collector's CA with /certificate import first (check-certificate=yes needs it).",
      ].join('\n');
    case 'nftables':
      return [
        "# /etc/threatcol-feed/curl.conf holds the feed's credentials (on curl's command line they would show",
        '# in ps to every local user), readable by root only:',
        `#   (umask 077 && mkdir -p /etc/threatcol-feed && echo 'user = "${feed.name}:PASSWORD"' > /etc/threatcol-feed/curl.conf)`,
        "# /etc/threatcol-feed/ca.pem: the collector's certificate (or its CA).",
        '',
        '# /etc/systemd/system/threatcol-feed.service',
        '[Service]',
        'Type=oneshot',
        // The second runs only when the first succeeded: a failed fetch leaves the rules as they are.
        `ExecStart=/usr/bin/curl -fsS --cacert /etc/threatcol-feed/ca.pem -K /etc/threatcol-feed/curl.conf -o /run/threatcol-feed.nft ${url}`,
        'ExecStart=/usr/sbin/nft -f /run/threatcol-feed.nft',
        '',
        '# /etc/systemd/system/threatcol-feed.timer',
        '[Timer]',
        'OnBootSec=30s',
        'OnUnitActiveSec=1min',
        '[Install]',
        'WantedBy=timers.target',
        '',
        '# systemctl enable --now threatcol-feed.timer',
      ].join('\n');
    default:
      return [
        `curl -fsS --cacert CA.pem -u ${feed.name}:PASSWORD ${url}`,
        `# Fetch with HTTP Basic; send If-None-Match with the last ETag: 304 when nothing changed (${host}).`,
      ].join('\n');
  }
}
