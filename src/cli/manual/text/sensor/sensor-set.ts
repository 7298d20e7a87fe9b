// Reference prose of `threatcol sensor set NAME`.
import type { CommandManual } from '../../command-manual.js';

export const sensorSetManual: CommandManual = {
  description: `
\`\`\`sh
threatcol sensor set fw-berlin --timezone Europe/Berlin      # fix a wrong detected_at
threatcol sensor set fw-berlin --description "Berlin edge"
threatcol sensor set fw-berlin --timezone default            # back to firewall.defaultTimezone
threatcol sensor set fw-berlin --expect-every 1h             # silent after an hour without a record
\`\`\`

Changes a sensor's time zone and/or description; the running daemon uses the change within a second,
without restart (records stored before keep their \`detected_at\`). At least one flag is required; an unknown
time zone exits 64 (\`USAGE\`), an unknown name 65 (\`SENSOR_NOT_FOUND\`). \`--json\` prints the changed sensor.
\`--syslog\` prints the whole identity it set (format, networks, pinned certificates) and warns on stderr, as
\`sensor add\` does, while no syslog listener is configured. \`--expect-every\` takes a duration (\`1h\`), \`off\` (never
silent, whatever \`sensors.expectEvery\` says) or \`default\` (back to it): docs/operations.md, "Silent sensors".
`,
};
