// Reference prose of `threatcol sensor show NAME`.
import type { CommandManual } from '../../command-manual.js';

export const sensorShowManual: CommandManual = {
  description: `
\`\`\`sh
threatcol sensor show fw-berlin                 # status, time zone, valid keys and their expiry, activity
threatcol sensor show fw-berlin --firewall      # what to paste into the PAN-OS configuration
threatcol sensor show fw-branch --syslog        # what to paste into a syslog sender (PAN-OS, FortiGate, rsyslog, syslog-ng)
threatcol sensor show fw-branch --syslog-errors # a syslog sender's counters and latest unreadable messages
\`\`\`

Shows one sensor: status, description, time zone, when it was created, how many keys are valid and until
when (none for a revoked sensor: every key of it is refused), last seen, last address, records received and
requests rejected. Neither a key nor its hash is ever shown. \`--firewall\` prints the PAN-OS server profile
settings, the URI \`/firewall\`, the three headers (the key as a placeholder: only \`add\` and \`rotate\` can show
it) and the payload template (see [Firewall setup](firewall-setup.md)).

\`--syslog\` prints, for a sensor with a syslog identity, the sender configuration with the collector's address
(\`--collector\`, else \`syslog.listen\`'s host, else this machine's name), port and certificate fingerprint:
the PAN-OS syslog server profile (format \`panos\`), FortiGate's \`config log syslogd setting\` (\`fortinet\`,
\`cef\`), rsyslog's \`omfwd\` (and \`omrelp\` when \`syslog.relpListen\` is set) and syslog-ng's \`syslog()\`
destination (see [Firewall setup](firewall-setup.md#syslog-senders)).

\`--syslog-errors\` asks the running daemon (its admin listener, \`admin.listen\` or \`--admin-listen\`) for the
sensor's syslog messages since it started, per format: received, stored, not threats, unreadable, over the
size limit, cut off by the connection's end, and the latest unreadable messages with the reason (see [Syslog input](syslog.md)). Without a
daemon answering it fails with \`CONNECTION_FAILED\`; with a token the daemon refuses (\`admin.token\`), with
\`ADMIN_TOKEN_REFUSED\` (exit 77).
`,
  options: {
    '--firewall': `print the PAN-OS setup text for this sensor`,
    '--syslog': `print the syslog sender configuration (with \`--json\`: the target and each snippet); a warning on stderr while no syslog listener is configured`,
    '--collector': `with \`--syslog\`: the collector's name or address as the sender reaches it`,
    '--syslog-errors': `print the daemon's syslog counters and latest unreadable messages for this sensor`,
    '--admin-listen': `the running daemon's admin listener when \`admin.listen\` does not say it (port 0 in the configuration)`,
    '--json': `print the sensor as JSON (with \`--firewall\`: the setup as JSON, \`uri\`, \`headers\`, \`payload\`, ...)`,
  },
};
