// Reference prose of `threatcol outputs list`.
import type { CommandManual } from '../../command-manual.js';

export const outputsListManual: CommandManual = {
  description: `
\`\`\`sh
threatcol outputs list
threatcol outputs list --json | jq '.outputs[] | {name, state, lag: .position.lagRecords}'
\`\`\`

One line per output: its type, state (\`running\`, \`retrying\` while its receiver fails, \`paused\` on a refused
credential or a missing secret file, \`disabled\`, \`stopped\` when no daemon is running, \`unknown\` when it
did not answer in time), the records stored after its position and the age of the oldest of them, its last
success, its dead letters, the records retention removed before it passed them (\`maxLag\`), and its last
error. An output removed from the configuration whose
position is kept is listed as \`removed (cursor kept)\` until \`outputs forget\`.

The last success and the last error are the running daemon's, since it started: \`none since start\` is an
output that has delivered nothing since then (after a restart or an upgrade, until its next batch). The last
error is shown with its time and stays after deliveries succeed again, marked \`(since recovered)\` once a batch
was delivered after it: an output that fails now and then shows it. \`--json\` has \`lastSuccessAt\`,
\`lastError\` and \`lastErrorAt\` (null when none since start).

The state comes from the running daemon's admin listener (\`GET /api/outputs\`), waited for up to 10 s: a
collector under load may take seconds to answer. When no daemon listens there (the connection is refused, or
it answers with an error), the positions are read from the store and the state is \`stopped\`. When something
takes the connection but sends no answer within 10 s (a collector overloaded, stopped in a debugger, or its
admin listener stuck), the positions are read from the store too, but the state is shown as \`unknown (the
collector did not answer in 10 s)\`, never \`stopped\`: run the command again, or look at the service
(\`systemctl status threatcol\`). \`--json\` says which in \`daemon\`: \`answered\`, \`none\` or
\`no answer in 10 s\` (its outputs' \`state\` then \`unknown\`). \`threatcol check\` warns the same way
(\`state unknown\`) for each output. A daemon that refuses the token this command sends (\`admin.token\` or
\`THREATCOL_ADMIN_TOKEN\`: none, or not the daemon's) is running: the command says so and exits 77
(\`ADMIN_TOKEN_REFUSED\`), and \`check\` shows \`state unknown\` for each output.
`,
  options: {
    '--admin-listen': `the running daemon's admin listener when \`admin.listen\` does not say it (port 0 in the configuration)`,
  },
};
