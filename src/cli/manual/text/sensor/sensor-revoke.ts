// Reference prose of `threatcol sensor revoke NAME`.
import type { CommandManual } from '../../command-manual.js';

export const sensorRevokeManual: CommandManual = {
  description: `
Marks the sensor revoked (it stays in the registry for audit, and in \`sensor list\`). The running daemon
answers its key with 403 \`SENSOR_REVOKED\` within a second, without restart, also a request whose body was
still arriving when the revoke was seen (nothing of it is stored). An unknown name exits 65.
A revoked sensor cannot be re-activated; \`sensor delete NAME --yes\` removes it so that the name can be issued
again.
`,
};
