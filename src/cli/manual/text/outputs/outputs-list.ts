// Reference prose of `threatcol outputs list`.
import type { CommandManual } from '../../command-manual.js';

export const outputsListManual: CommandManual = {
  description: `
\`\`\`sh
threatcol outputs list
threatcol outputs list --json | jq '.outputs[] | {name, state, lag: .position.lagRecords}'
\`\`\`

One line per output: its type, state (\`running\`, \`retrying\` while its receiver fails, \`paused\` on a refused
credential or a missing secret file, \`disabled\`, \`stopped\` when no daemon answers), the records stored after
its position and the age of the oldest of them, its last success, its dead letters, the records retention
removed before it passed them (\`maxLag\`), and its last error. An output removed from the configuration whose
position is kept is listed as \`removed (cursor kept)\` until \`outputs forget\`.

The last success and the last error are the running daemon's, since it started: \`none since start\` is an
output that has delivered nothing since then (after a restart or an upgrade, until its next batch). The last
error is shown with its time and stays after deliveries succeed again, marked \`(since recovered)\` once a batch
was delivered after it: an output that fails now and then shows it. \`--json\` has \`lastSuccessAt\`,
\`lastError\` and \`lastErrorAt\` (null when none since start).

The state comes from the running daemon's admin listener (\`GET /api/outputs\`); when none answers, the
positions are read from the store and the state is \`stopped\`.
`,
  options: {
    '--admin-listen': `the running daemon's admin listener when \`admin.listen\` does not say it (port 0 in the configuration)`,
  },
};
