// Reference prose of `threatcol serve`: the collector, its signals, exit statuses and `--workers`.
import type { CommandManual } from '../command-manual.js';
import { eachRequest, limits } from './serve-requests.js';
import { severalCores } from './serve-workers.js';

export const serveManual: CommandManual = {
  description: `
Runs the collector: HTTPS (TLS 1.2 and 1.3) with \`POST /firewall\` and \`POST /generic\`.

Signals: **SIGTERM/SIGINT** stop accepting connections, finish in-flight requests, sync the store and exit 0
(connections still open after 8 s are closed). **SIGHUP** re-reads the sensor registry and the certificate
and key, without dropping connections.
`,
  options: {
    '--host': `listen address; default \`::\` (all addresses, IPv6 and IPv4)`,
    '--port': `listen port (\`0\`: any free port); default \`443\``,
    '--cert': `PEM certificate chain, with \`--key\` (both or neither); default: a self-signed one in \`<dataDir>/tls/\``,
    '--key': `PEM private key of \`--cert\` (both or neither); default: the self-signed one in \`<dataDir>/tls/\``,
    '--log-level': `\`fatal\` \`error\` \`warn\` \`info\` \`debug\` \`trace\` \`silent\`; default \`info\``,
    '--log-format': `\`auto\` (the default): pretty on a terminal; when stdout is the systemd journal (\`JOURNAL_STREAM\` names it), one readable line per entry (the message, then \`key=value\`) with its syslog priority, so \`journalctl -p warning\` finds the warnings; NDJSON elsewhere. \`json\`: NDJSON everywhere, for log shippers (in the journal each line still carries its priority). \`pretty\`: pino-pretty`,
    '--admin-listen': `the [admin listener](operations.md#monitoring-and-dashboard) (dashboard, \`/metrics\`, \`/healthz\`, \`/readyz\`); \`""\` turns it off, port \`0\` picks one (logged); default \`127.0.0.1:9441\``,
    '--workers': `processes that serve requests (config \`server.workers\`); \`auto\`: one per CPU this process may use (\`os.availableParallelism()\`, which respects CPU affinity and \`CPUAffinity=\`); see [Several cores](#several-cores---workers); default \`1\``,
    '--data-dir': `data directory; default \`$STATE_DIRECTORY\`, else \`/var/lib/threatcol\` for root, else \`~/.local/state/threatcol\` (see [Data directory](records.md#data-directory))`,
  },
  sections: [severalCores, eachRequest, limits],
  exitStatus: `
0 after a clean stop, 78 bad configuration or TLS material, 69 the port cannot be bound, 74 the disk failed an
\`fdatasync\` (the daemon stops rather than acknowledge records it cannot trust; \`Restart=on-failure\` brings it
back once the disk is healthy).
`,
  environment: {
    NOTIFY_SOCKET: `set by systemd (\`Type=notify\`): serve reports \`READY=1\` once it listens, \`RELOADING=1\` on SIGHUP and \`STOPPING=1\` on SIGTERM.`,
    LISTEN_FDS: `with \`LISTEN_PID\`, set by systemd for socket activation (\`threatcol.socket\`): serve uses the passed listening socket, and \`server.host\` and \`server.port\` are not used.`,
    LISTEN_PID: `the process \`LISTEN_FDS\` is meant for; variables inherited by another process are ignored.`,
  },
};
