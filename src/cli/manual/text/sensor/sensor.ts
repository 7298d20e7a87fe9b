// Reference prose of `threatcol sensor`: the sensor registry's commands that issue, change and end keys.
import type { CommandManual } from '../../command-manual.js';

export const sensorManual: CommandManual = {
  description: `
A sensor is one sender (a firewall, a script) with a name and a key, kept in the sensor registry of the data
directory (or of NATS). These commands issue, list, change, revoke and delete sensors; a running daemon
picks up every change within a second, without restart.
`,
};
