// Reference prose of `threatcol outputs replay`.
import type { CommandManual } from '../../command-manual.js';

export const outputsReplayManual: CommandManual = {
  description: `
\`\`\`sh
threatcol outputs replay siem --since 24h
threatcol outputs replay siem --since 2026-11-20T00:00:00Z
\`\`\`

Moves the output's position to the first record received at or after the instant, so everything since then
that is still stored is sent again (a receiver recognises what it has by the record ids). A running daemon
takes the new position at its next batch, or within half a second when the output is idle.
`,
  options: { '--since': `a duration ago (\`24h\`, \`7d\`) or an ISO time (no zone means UTC)` },
};
