// Reference prose of `threatcol outputs dead-letter`.
import type { CommandManual } from '../../command-manual.js';

export const outputsDeadLetterManual: CommandManual = {
  description: `
\`\`\`sh
threatcol outputs dead-letter hook
threatcol outputs dead-letter hook --json | jq '.[].answer'
threatcol outputs dead-letter hook --retry
\`\`\`

Records the output's receiver refused for good are kept in \`outputs/NAME.dead-letter.ndjson\` in the data
directory, one JSON line each: \`{"at", "answer", "record"}\` (the time, the receiver's answer, the record as
stored). \`--retry\` sends them again through the receiver: the delivered ones leave the file, those refused
again stay with the new answer.
`,
  exitStatus: `Exit 69 (\`OUTPUT_FAILED\`) when \`--retry\` left records refused.`,
};
