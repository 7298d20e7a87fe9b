// Reference prose of `threatcol sensor delete NAME --yes`.
import type { CommandManual } from '../../command-manual.js';

export const sensorDeleteManual: CommandManual = {
  description: `
Removes the sensor and its keys from the registry: the running daemon answers its key with 401
\`AUTH_INVALID\` within a second. Its stored records stay. The name can then be issued again with \`sensor
add\` (the way to reuse a revoked sensor's name). Without \`--yes\` it exits 64 and changes nothing.
Prefer \`sensor revoke\` while you want the name kept for audit.
`,
};
