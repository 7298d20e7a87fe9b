// Reference prose of `threatcol sensor list`.
import type { CommandManual } from '../../command-manual.js';

export const sensorListManual: CommandManual = {
  description: `
A table of sensors: name, status, created, last seen, last address, records received (from
\`sensor-stats.json\`, which the daemon writes every 5 s) and description. Never a key or its hash. A sensor
with an expected interval (\`--expect-every\`) that sent nothing accepted for longer shows \`silent since TIME\`
as its status (docs/operations.md, "Silent sensors").
`,
  options: {
    '--json': `print an array with \`name\`, \`status\`, \`description\`, \`timezone\`, \`created_at\`, \`revoked_at\`, \`last_seen\`, \`last_address\`, \`records_received\`, \`rotation_grace_until\`, \`state\` (\`active\`, \`silent\` or \`revoked\`), \`expect_every\` (null: not watched) and \`silent_since\` (null: not silent)`,
  },
};
