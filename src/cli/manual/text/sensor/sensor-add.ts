// Reference prose of `threatcol sensor add NAME`.
import type { CommandManual } from '../../command-manual.js';

export const sensorAddManual: CommandManual = {
  description: `
Issues a sensor and its key. The key (\`tck_\` + 32 random bytes in base64url) is printed **once**; only its
SHA-256 hash is stored. Human output shows the two header lines to paste and the PAN-OS payload template.

Names: 1-64 characters, letters, digits, \`.\`, \`_\`, \`-\`, starting with a letter or digit. A name already in
use exits 65 (\`SENSOR_EXISTS\`); the message says whether that sensor is active (change it with \`sensor set\`,
or \`sensor rotate\` its key) or revoked (free the name with \`sensor delete NAME --yes\`). The running daemon
accepts the new key within a second, without restart.

The output names the data directory the sensor was written to. Run it as the service user (\`sudo -u
threatcol threatcol sensor add NAME\`) or as root: as an ordinary user it writes to
\`~/.local/state/threatcol\`, which the service never reads; it warns when it is about to create such a
registry while \`/var/lib/threatcol/sensors.json\` exists.

With \`--syslog\`, the output also says the identity stored (format, networks, pinned certificates) and points to
\`sensor show NAME --syslog\` for the sender's setup; while no syslog listener is configured (\`syslog.listen\`,
\`syslog.tcpListen\`, \`syslog.relpListen\` all off) it warns on stderr (exit 0): the sensor could send to nothing.
`,
  options: {
    '--description': `free text shown in \`sensor list\` (the DESCRIPTION column) and \`sensor show\``,
    '--timezone': `zone of the firewall's clock, used for its zone-less \`time_received\` (e.g. \`Europe/Berlin\`); default \`firewall.defaultTimezone\``,
    '--from': `syslog: a source network its connections come from, an address or CIDR (repeatable). Of two sensors known by address alone whose networks overlap, a connection belongs to the one with the narrower network (longest prefix); \`sensor add\` and \`sensor set\` warn of such an overlap on stderr (exit 0)`,
    '--client-ca': `syslog over TLS: a PEM bundle of CA certificates (the root among them); a client certificate is this sensor's when it chains to the bundle through its most specific CA (the intermediate, when the bundle holds a root and an intermediate) and names \`--client-cn\``,
    '--json': `print \`{"name": ..., "key": ..., "created_at": ..., "data_dir": ..., "store_backend": ...}\` (plus \`description\`/\`timezone\` when set)`,
  },
};
