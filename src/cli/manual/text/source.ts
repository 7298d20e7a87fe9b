// Reference prose of `threatcol source` and `source show`: one source address or network, whole.
import type { CommandManual } from '../command-manual.js';

export const sourceManual: CommandManual = {
  description: `
What one source did: \`show\` sums its stored records and says whether a block or an allow entry covers it. It
reads the store (either backend), needs no running daemon, and changes nothing.
`,
};

export const sourceShowManual: CommandManual = {
  description: `
\`\`\`sh
threatcol source show 203.0.113.48                 # the last 30 days of this address
threatcol source show 198.51.100.0/24 --since 7d   # a whole network, this week
threatcol source show 2001:db8::7 --json | jq .sensors
\`\`\`

Sums the stored records whose source address is the address given, or lies in the CIDR network given (compared
as addresses, as \`threats search --src\` does; a zone id, \`fe80::1%eth0\`, is ignored), received in the window (\`--since\`, default the last 30 days,
at most 30 days wide): when it was first and last seen, its records by criticality, the sensors that stored
them, how many distinct destinations and destination ports it hit (the ten most frequent of each), its ten most
frequent threats, its country and network (AS number and name) when records carry them (from the newest record
that does; for a network whose records name several, the number of countries or ASes instead), and the block
and the allow entry that cover all of it, if any (a block in force, an allow entry of \`allow add\` or of
\`blocklist.allow\`; the narrowest when several do). A block that an allow entry covers is in no feed, and the
text says so (\`(not in the feeds: the allow entry 198.51.100.0/24 keeps it out)\`). A network partly blocked
is not blocked: it says how many blocks lie inside it, and names the first three (\`Blocked: no; 2 blocks
within (198.51.100.7/32, 198.51.100.9/32)\`). Each value stays on its line: a line break or control character
a sensor sent in a threat name shows as \`?\`.

It reads the store back from its newest record within the look-up's bound (1,000,000 records or 512 MiB read,
as \`threats search\`; see [Operations](operations.md#dashboard), "Look-up"). When that bound stops it before the
start of the window, it says so on stderr and the summary covers what it read: the newest records, so
\`first_seen\` may be later than the source's first record. Narrow the window with \`--since\`. Ctrl-C stops it.
It counts at most 100,000 distinct destinations and threats (a threat by its first 256 characters): past that,
new ones are left out, and the text says so on a line of its own (\`--json\`: \`"capped": true\`). The sums
of the part read last and of the rest are held apart until that part is whole, so a look-up holds at most twice
that.

The dashboard shows the same summary (\`GET /api/source\`, [admin-api.md](admin-api.md#get-apisource)) when a
source address is clicked.
`,
  options: {
    '--since': `the window's start: a duration ago (\`90m\`, \`24h\`, \`7d\`) or an ISO time (\`2026-11-21T10:00:00Z\`; no zone means UTC); default \`30d\`, and 30 days back at most`,
    '--json': `print the summary as one JSON object: \`address\`, \`first_seen\`, \`last_seen\` (ISO times, null without records), \`records\`, \`criticality\` (five counts, 0 to 4), \`sensors\` (names), \`targets\` and \`ports\` (distinct counts; an address once however spelled), \`top_targets\` (\`{address, count}\`), \`top_ports\` (\`{port, count}\`), \`threats\` (\`{threat, count}\`), \`country\`, \`asn\`, \`as_org\` (null when no record has them, or, for a network, when its records name several), \`countries\` and \`asns\` (distinct counts), \`capped\` (true past 100,000 distinct destinations or threats), \`blocked\` (null or the block), \`allowed\` (null or the allow entry, with \`source\`: \`command\` or \`configuration\`), \`blocks_within\` (the blocks in force inside it) and \`blocks_within_first\` (the first three's networks), \`since\` and \`bounded\` (null, or the bound that stopped the read)`,
    '--data-dir': `which data directory to read (as for every command)`,
  },
  exitStatus: `
Exit status 0 when the summary ran, whether or not it found records, and on Ctrl-C. Exit 64 for an address or
CIDR that does not parse or a window wider than 30 days, 78 (\`CONFIG_INVALID\`) when the store cannot be read
(run it as the service user or root).
`,
};
