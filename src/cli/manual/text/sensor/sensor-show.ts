// Reference prose of `threatcol sensor show NAME`.
import type { CommandManual } from '../../command-manual.js';

export const sensorShowManual: CommandManual = {
  description: `
\`\`\`sh
threatcol sensor show fw-berlin                 # status, time zone, valid keys and their expiry, activity
threatcol sensor show fw-berlin --firewall      # what to paste into the PAN-OS configuration
\`\`\`

Shows one sensor: status, description, time zone, when it was created, how many keys are valid and until
when (none for a revoked sensor: every key of it is refused), last seen, last address, records received and
requests rejected. Neither a key nor its hash is ever shown. \`--firewall\` prints the PAN-OS server profile
settings, the URI \`/firewall\`, the three headers (the key as a placeholder: only \`add\` and \`rotate\` can show
it) and the payload template (see [Firewall setup](firewall-setup.md)).
`,
  options: {
    '--firewall': `print the PAN-OS setup text for this sensor`,
    '--json': `print the sensor as JSON (with \`--firewall\`: the setup as JSON, \`uri\`, \`headers\`, \`payload\`, ...)`,
  },
};
