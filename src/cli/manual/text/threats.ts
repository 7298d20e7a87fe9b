// Reference prose of `threatcol threats`: reading the stored records.
import type { CommandManual } from '../command-manual.js';

export const threatsManual: CommandManual = {
  description: `
Reads the stored records through the store (either backend): \`tail\` prints the newest and follows new ones,
\`stats\` counts those of a time window. Neither needs a running daemon, nor changes anything.
`,
};
