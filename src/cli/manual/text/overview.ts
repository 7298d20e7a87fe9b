// Reference prose of the program itself: what threatcol is and the habits every command shares.
import type { CommandManual } from '../command-manual.js';

export const overviewManual: CommandManual = {
  description: `
threatcol is a threat-report collector for sysadmins. Firewalls (Palo Alto HTTP log forwarding) and custom
sensors POST threat detections over HTTPS; threatcol authenticates each sender by two headers, validates the
records, maps their criticality, stores every record durably, and gives the admin commands to issue and
revoke sensor keys, watch threats live and send test traffic.

Every command but \`systemd-unit\` and \`completion\` takes \`--config FILE\` and \`--data-dir DIR\` (\`send\` uses them
only for the default port and the local collector's certificate). A command exits 0 on success and otherwise
with the exit status of its error code (see [Errors](errors.md)); errors print
\`threatcol: CODE: message\` on stderr. A mistake on the command line (unknown option, missing argument, a flag
value that is not a valid duration, integer, port or time zone) is \`threatcol: USAGE: …\` and one hint line
(\`see threatcol sensor add --help\`), exit 64; a bare \`threatcol\` lists the commands and exits 64.
\`threatcol help sensor add\` (or \`threatcol sensor add --help\`) shows a command's flags. Commands that read
or change the data directory refuse one that does not exist (\`NO_DATA_DIR\`, exit 66: a mistyped
\`--data-dir\` is not an empty system); \`sensor add\` and \`serve\` create it. Every \`--json\` prints one JSON
document, indented by two spaces (\`threats tail --json\` prints one record per line: NDJSON).

\`threatcol --version\` prints the threatcol version, the Node.js runtime's version and the store format
version (the layout of the stored data, which an upgrade that changes it migrates); \`threatcol --version
--json\` prints them as \`{"threatcol": "…", "node": "…", "storeFormat": 1}\`.
`,
};
