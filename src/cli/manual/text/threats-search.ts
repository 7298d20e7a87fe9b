// Reference prose of `threatcol threats search`: the look-up of stored records by address, threat or sensor.
import type { CommandManual } from '../command-manual.js';

export const threatsSearchManual: CommandManual = {
  description: `
\`\`\`sh
threatcol threats search --src 203.0.113.48 --since 7d     # what else did this address do this week?
threatcol threats search --dst 2001:db8::/32 --threat eicar
threatcol threats search --sensor fw-berlin --min-criticality 3 --since 2026-11-20 --until 2026-11-21
threatcol threats search --src 198.51.100.0/24 --json | jq .threat
threatcol threats search --src-country NL --src-asn AS64500 --since 7d   # one network of one country
\`\`\`

Looks up stored records in a window (\`--since\`, default the last 24 hours; \`--until\`, default now; at most 30
days wide) and prints the newest matching ones first, one page (\`--limit\`, 50 by default) at a time, in the
line format of \`threats tail\`. When older matches exist it says on stderr how to get the next page: run the
same command again with \`--before ID\` (the id of the page's last, oldest record).

Addresses are compared as addresses, not as text: \`--src 192.0.2.0/24\` matches every IPv4 source in that
network (and its IPv4-mapped IPv6 form), \`--dst 2001:db8::/32\` every IPv6 destination in that prefix, a plain
address just that address however it is written (\`2001:db8::1\` and \`2001:0db8:0:0:0:0:0:1\` are one). An
IPv6 network holds IPv4 addresses only inside the IPv4-mapped space (\`::ffff:0:0/96\`): \`::/0\` is every IPv6
address, not every address. The
threat is a substring of the threat name, ignoring case. Countries and AS numbers are those the enrichment
stored with each record (\`src_country\`, \`src_asn\`, \`dst_country\`, \`dst_asn\`; see [Operations, "Country
and AS enrichment"](operations.md#country-and-as-enrichment)): a record stored without them (a private or
documentation address, one the database does not know, enrichment off) matches no country or AS filter. A
country code that is not two letters, or an AS number that is not one (0 to 4294967295), is refused. All given
filters must hold.

The store is read back from its newest record, so a look-up that matches rarely reads far: each page reads
back through a bounded number of records and bytes (the same look-up as the dashboard's search, bounds in
[Operations](operations.md#dashboard), "Look-up"). When that bound stops it before the start of the window, it
says so on stderr and the page holds what it found: narrow the window (\`--until\`), or add \`--sensor\`,
which a NATS store reads from that sensor's subject alone. Each page reads back from the newest record again.
Ctrl-C stops it.
`,
  options: {
    '--src': `only records whose source address is this IPv4 or IPv6 address, or lies in this CIDR network`,
    '--dst': `only records whose destination address is this address, or lies in this CIDR network`,
    '--threat': `only records whose threat name contains this text, ignoring case`,
    '--src-country': `only records whose source is in this country: its ISO 3166-1 alpha-2 code, in any case (\`US\`, \`de\`), as the enrichment stored it in \`src_country\``,
    '--src-asn': `only records whose source is in this autonomous system: its number, bare or with \`AS\` (\`15169\`, \`AS15169\`), as stored in \`src_asn\``,
    '--dst-country': `only records whose destination is in this country, written as for \`--src-country\``,
    '--dst-asn': `only records whose destination is in this autonomous system, written as for \`--src-asn\``,
    '--sensor': `only records of this sensor; repeat the flag for several sensors`,
    '--min-criticality': `only records at or above this criticality (0 informational … 4 critical)`,
    '--endpoint': `only records received on this endpoint (\`collector\`: the collector's own, a sensor silent or back)`,
    '--since': `the window's start: a duration ago (\`90m\`, \`24h\`, \`7d\`) or an ISO time (\`2026-11-21T10:00:00Z\`; no zone means UTC); default \`24h\``,
    '--until': `the window's end (exclusive), written as \`--since\`; default now. The window may span 30 days at most`,
    '--before': `the next page: only records stored before the record with this id (printed on stderr after a full page)`,
    '--limit': `records per page, 1 to 1000 (default 50)`,
    '--json': `print each stored record exactly as stored, one JSON object per line, newest first (see [Stored records](records.md#stored-records)); the notes about further pages stay on stderr`,
    '--data-dir': `which data directory to read (as for every command)`,
  },
  exitStatus: `
Exit status 0 when the look-up ran, whether or not it found records, and on Ctrl-C. Exit 64 for a bad flag
value (an address or CIDR that does not parse, a country code or AS number that is not one, a window wider than
30 days or ending before it starts), 78 (\`CONFIG_INVALID\`) when the store cannot be read (run it as the service
user or root).
`,
};
