// Reference prose of `threatcol threats tail`: the live view of stored records.
import type { CommandManual } from '../command-manual.js';

export const threatsTailManual: CommandManual = {
  description: `
\`\`\`sh
threatcol threats tail                          # the last 10 records, then new ones as they arrive
threatcol threats tail --sensor fw-berlin       # watch one firewall's records arrive
threatcol threats tail --min-criticality 3 --since 24h --no-follow
threatcol threats tail --json | jq .            # the stored records as NDJSON
\`\`\`

Prints the last records of the store and then follows it like \`tail -f\`: new records show up as
\`threatcol serve\` stores them (it watches the store and polls every 250 ms where watching is unavailable).
It reads the store from its end, so it starts at once however big the store is; it follows the
daemon onto new segments when they rotate, keeps going when retention deletes old ones, and never prints a
line the daemon has only half written. One line per record:

\`\`\`
2026-11-21 09:15:30Z  HIGH      fw-berlin  192.0.2.10:51234 → 198.51.100.20:443 tcp  EICAR Test File Detection
\`\`\`

(time received in UTC, criticality, sensor, \`source:port → destination:port protocol\`, threat). An address
the enrichment placed is followed by its country and AS, \`8.8.8.8:51234 (US AS15169)\` (either alone where
only it is known; the AS's name is in \`--json\`, as \`src_as_org\`). On a
terminal the line is coloured by criticality; \`NO_COLOR=1\` or a pipe gives plain text. Control characters
sent by a sensor are shown as \`?\`, so a record cannot put escape sequences on your terminal.

Reading the last 10 records of a 1.1 GB store takes a few milliseconds; the whole command, Node's start-up
included, took 0.25 s in the benchmark ([docs/performance.md](performance.md), figure 7). Filters are
applied while reading backwards, so a filter that matches rarely reads further back until it has N records
(a sensor that sent nothing made it read all 1.1 GB, in 7 s); add \`--since\` to bound that.
`,
  options: {
    '--lines': `how many of the last (matching) records to print first; \`0\` prints only new ones`,
    '--sensor': `only records of this sensor; repeat the flag for several sensors`,
    '--min-criticality': `only records at or above this criticality (0 informational … 4 critical)`,
    '--endpoint': `only records received on this endpoint (\`collector\`: the collector's own, a sensor silent or back)`,
    '--since': `only records received since then: a duration ago (\`30s\`, \`90m\`, \`24h\`, \`7d\`, \`1h30m\`) or an ISO time (\`2026-11-21T10:00:00Z\`; no zone means UTC)`,
    '--json': `print each stored record exactly as stored, one JSON object per line (see [Stored records](records.md#stored-records))`,
    '--data-dir': `which data directory to read (as for every command)`,
  },
  exitStatus: `
Exit status 0 on Ctrl-C (SIGINT) and when the reader of a pipe goes away (\`threatcol threats tail --json |
head -1\` prints no error). When following, a closed pipe is noticed at the next record written, as with
\`tail -f\`. Exit 64 for a bad flag value, 78 (\`CONFIG_INVALID\`) when the store cannot be read (run it as
the service user or root).
`,
  environment: {
    NO_COLOR: `set (to anything, e.g. \`NO_COLOR=1\`): plain text on a terminal too, no colours by criticality.`,
  },
};
