// Reference prose of `threatcol outputs forget`.
import type { CommandManual } from '../../command-manual.js';

export const outputsForgetManual: CommandManual = {
  description: `
An output removed from the configuration keeps its position, so putting it back resumes where it stopped,
and retention keeps nothing for it. \`forget\` deletes that position; the dead letters stay. A configured
output that is forgotten starts again at its \`startAt\` (\`now\` by default) when next started.
`,
  exitStatus: `Exit 65 (\`OUTPUT_NOT_FOUND\`) when the output has no position.`,
};
