// Reference prose of `threatcol sensor rotate NAME`.
import type { CommandManual } from '../../command-manual.js';

export const sensorRotateManual: CommandManual = {
  description: `
\`\`\`sh
threatcol sensor rotate fw-berlin               # new key; the old one keeps working for 24 h
threatcol sensor rotate fw-berlin --grace 2h
threatcol sensor rotate fw-berlin --grace 0     # compromised key: refuse it from now on
\`\`\`

Issues a new key for the sensor and prints it once, with the headers and the firewall setup text (as
\`sensor add\` does). Every key the sensor had keeps working until the grace period ends, then the daemon
refuses it (\`AUTH_INVALID\`); a running daemon picks the change up by itself within a second, no restart.
\`sensor list\` shows the pending rotation (\`active (old key until …)\`, \`rotation_grace_until\` in \`--json\`).
Keys that expired more than 7 days ago are dropped from the registry at the next rotation. Rotation never
extends a key: rotating twice with a shorter grace shortens the old keys' time.

A revoked sensor cannot be rotated (exit 77, \`SENSOR_REVOKED\`): add a new sensor instead. An unknown
name exits 65 (\`SENSOR_NOT_FOUND\`), a bad duration 64.
`,
  options: {
    '--grace': `how long the old key stays valid: \`24h\`, \`90m\`, \`30s\`, \`1h30m\`, \`7d\`, or \`0\` to end it at once`,
    '--json': `print \`{"name", "key", "grace_ms", "old_keys_expire_at", "created_at", "data_dir", "store_backend"}\``,
  },
};
