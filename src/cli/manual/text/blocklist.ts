// Reference prose of `threatcol feed`, `block` and `allow`: blocklists that firewalls pull (docs/blocklists.md).
import type { CommandManual } from '../command-manual.js';

export const feedManual: CommandManual = {
  description: `
A feed is a URL on the collector's HTTPS listener (\`https://HOST/feeds/NAME\`, the same port and certificate
as the sensors use) that serves the active blocks in one firewall's format, with its own HTTP Basic user name
and password. How blocks are made, each format and its firewall's setup: docs/blocklists.md.
`,
};

export const feedAddManual: CommandManual = {
  description: `
Adds a feed and prints its URL, its user name (the feed's name) and a password. The password is printed
**once**; only its SHA-256 hash is stored (\`feed rotate\` gives a new one). A running collector serves the new
feed within a second. Names: 1-64 letters, digits, \`_\` or \`-\` (the name is part of the URL); a name in use
exits 65 (\`FEED_EXISTS\`).
`,
  options: {
    '--format': `\`paloalto\` (PAN-OS External Dynamic List, capped at 50,000 entries), \`fortinet\` (FortiGate external threat feed, capped at 128,000), \`plain\` (one address or CIDR per line), \`mikrotik\` (a RouterOS script for \`/import\`), \`nftables\` (a script for \`nft -f\`), \`json\``,
    '--max-entries': `serve at most this many blocks: over it, the highest criticality, then the newest, are kept; \`feed list\` shows how many were left out`,
    '--aggregate': `merge neighbouring and overlapping blocks into the fewest CIDRs covering exactly the same addresses (for firewalls with short lists); a merged entry ends with the earliest of the blocks it covers, and the feed is rendered again then`,
    '--from': `serve the feed only to clients in these networks (repeat the option or list several); a client elsewhere with the right credentials gets 403`,
    '--json': `print \`{"name", "format", "url", "username", "password"}\``,
  },
};

export const feedListManual: CommandManual = {
  description: `
Lists the feeds: format, the blocks each serves now, the blocks its cap leaves out, its cap, its last fetch
(time, client address and status: 200, 304, 401 for wrong credentials, 403 from outside \`--from\`) and URL. A
collector notes a feed's last fetch at most once a minute while its status stays the same, so a firewall that
stopped polling shows an old time: PAN-OS, for one, stops enforcing a list it cannot authenticate to.
`,
};

export const feedShowManual: CommandManual = {
  description: `
Shows one feed; \`--firewall\` prints the setup to paste for its format: a PAN-OS External Dynamic List, a
FortiGate \`config system external-resource\`, a RouterOS \`/system scheduler\` running \`/tool fetch\` and
\`/import\`, or a systemd timer running curl and \`nft -f\` on a Linux firewall. \`PASSWORD\` stands for the
feed's password.
`,
};

export const feedRotateManual: CommandManual = {
  description: `
Gives a feed a new password, printed once; the old one is refused (401) from the next request on. Change it on
the firewall at once: PAN-OS stops enforcing an External Dynamic List it cannot authenticate to.
`,
};

export const feedRemoveManual: CommandManual = {
  description: `
Removes a feed: its URL answers 401, as for any unknown feed, from the next request on. The blocks stay.
`,
};

export const blockManual: CommandManual = {
  description: `
Blocks are made by the rules of \`blocklist.rules\` and by hand; every feed serves the active ones.
`,
};

export const blockAddManual: CommandManual = {
  description: `
Blocks an address or CIDR for a while, in every feed within a second (rule \`manual\`, criticality 4, the
CLI's user recorded). \`0.0.0.0/0\` and \`::/0\` are refused; private, loopback, link-local, unique-local, shared,
multicast and unspecified ranges need \`--force\`. An allow entry still keeps a manual block out of the feeds.
`,
};

export const blockRemoveManual: CommandManual = {
  description: `
Removes a block from every feed within a second. The records that made it do not make it again: only records
received after the removal count towards a rule.
`,
};

export const blockListManual: CommandManual = {
  description: `
Lists the active blocks, newest first: address (the unit blocked: the address for IPv4, its /64 for IPv6),
rule or \`manual\`, reason, since, until, records and sensors that made it, who made a manual one, and whether
an allow entry keeps it out of the feeds. \`--all\` adds expired blocks not yet cleaned up.
`,
};

export const allowManual: CommandManual = {
  description: `
Networks never blocked, besides \`blocklist.allow\` in the configuration. Private, loopback, link-local,
unique-local, shared, multicast and unspecified addresses are never blocked by a rule unless
\`blocklist.blockPrivate\` is true.
`,
};

export const allowAddManual: CommandManual = {
  description: `
Keeps an address or CIDR from ever being blocked; blocks it covers (or that cover it) leave every feed within a
second. With \`--for\`, the entry ends after that long. A whole family (\`0.0.0.0/0\`, \`::/0\`) turns every
rule off for it, and is refused without \`--force\` (exit 65).
`,
};

export const allowListManual: CommandManual = {
  description: `
Lists the allow entries: those of \`blocklist.allow\` and those added with \`allow add\` (reason, since, until,
who).
`,
};

export const allowRemoveManual: CommandManual = {
  description: `
Removes an entry added with \`allow add\` (those of \`blocklist.allow\` are changed in the configuration).
Only records received from then on can block the network again.
`,
};
