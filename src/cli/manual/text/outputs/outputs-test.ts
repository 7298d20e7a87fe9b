// Reference prose of `threatcol outputs test`.
import type { CommandManual } from '../../command-manual.js';

export const outputsTestManual: CommandManual = {
  description: `
\`\`\`sh
threatcol outputs test oncall
\`\`\`

Sends one sample record through the output's real receiver, with the output's URL, credentials and
format, and prints what the receiver answered. The record is marked: sensor \`threatcol-test\`, threat
\`threatcol outputs test (not a threat)\`, criticality 0. Nothing is stored and no position moves.
`,
  exitStatus: `Exit 69 (\`OUTPUT_FAILED\`) when the receiver did not take it, with its answer and what the daemon would do
(\`a temporary failure\`: it sends again, backing off; \`credentials refused\`: it pauses the output); 65 for an unknown
output.`,
};
