// Reference prose of `threatcol store`: moving the store between backends.
import type { CommandManual } from '../command-manual.js';

export const storeManual: CommandManual = {
  description: `Works on the store as a whole: \`migrate\` copies a data directory's files store into NATS JetStream.`,
};
