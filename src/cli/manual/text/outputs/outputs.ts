// Reference prose of `threatcol outputs`: operating the outputs that forward records.
import type { CommandManual } from '../../command-manual.js';

export const outputsManual: CommandManual = {
  description: `
Outputs forward stored records to SIEMs and alert channels (\`outputs\` in the configuration; how they work
and the delivery guarantee: docs/operations.md, "Outputs"). The daemon runs them; these commands show their
state, try one, move or delete an output's position, and handle the records its receiver refused.
`,
};
