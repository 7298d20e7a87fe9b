// Reference prose of `threatcol send`: one request to a collector, or many as the load generator.
import type { CommandManual } from '../command-manual.js';

export const sendManual: CommandManual = {
  description: `
\`\`\`sh
threatcol send firewall --sample --url https://collector.example.org --sensor fw-test --key-file ./fw-test.key
threatcol send generic --data '{"source_ip":"192.0.2.7","destination_ip":"10.0.0.5","destination_port":22,"protocol":"TCP","threat":"SSH brute force","criticality":3}'
threatcol send generic --data @records.json        # a file: one record or a JSON array of up to 1000
some-tool | threatcol send generic --data -        # standard input
threatcol send syslog --format panos --sample --url collector.example.org:6514 --client-cert fw.pem --client-key fw.key
threatcol send syslog --format cef --sample --count 1000 --concurrency 4 --tcp --url 127.0.0.1:514
threatcol send syslog --sensor fw-branch --sample --source 192.0.2.10
\`\`\`

Sends one request to \`POST /firewall\` or \`POST /generic\` of a collector, prints the HTTP status and the
response body, and exits 0 on a 2xx answer. Otherwise it prints \`threatcol: CODE: message\` on stderr and
exits with the code's exit status from the [error table](errors.md): an \`AUTH_INVALID\` answer
exits 77 like a local authentication error, \`VALIDATION_FAILED\` 65, \`RATE_LIMITED\`/\`UNAVAILABLE\` 69. A
collector it cannot reach (refused, timed out, certificate not trusted) exits 69 with \`CONNECTION_FAILED\`
and a hint, and so does an answer that is not a threatcol error body (a proxy's error page: the collector
was not reached).

Flags win over the environment. By default the certificate is verified against the system CAs (Node's
bundled roots plus the distribution's bundle), or, for a collector on this machine, against its own
self-signed \`<data-dir>/tls/cert.pem\` when this user can read it; use at most one of \`--ca\`, \`--fingerprint\`
and \`--insecure\`.

\`send syslog\` sends \`--sample\` threat messages of \`--format\` (\`panos\`, \`cef\`, \`fortinet\`, \`suricata\`, each
as that sender writes it, its time the sending time in UTC), octet-counted, to the [syslog listener](syslog.md)
at \`--url HOST:PORT\` (default: localhost and \`syslog.listen\`'s port): over TLS, verified as above and
presenting \`--client-cert\`/\`--client-key\` when the sensor pins a certificate, or with \`--tcp\` over plain TCP
(default port \`syslog.tcpListen\`'s). \`--count N\` sends N distinct messages over \`--concurrency C\`
connections. Syslog has no answer: it exits 0 once the collector has closed the connections, and prints what
it sent; whether they were stored shows in \`threats tail --endpoint syslog\` and \`sensor show NAME
--syslog-errors\`. A connection no sensor matches is closed unread by the collector: \`send syslog\` waits
after its last message (20 times the connection's set-up time, 0.5 to 5 s) for that close or reset, and exits
77 (\`SYSLOG_REFUSED\`) when it comes. \`--sensor NAME\`, run on the collector, tests one sensor of its registry:
its format by default, its certificate required when it is known by one, and each connection checked before
anything is sent (77: \`SYSLOG_REFUSED\` when no sensor would take it, \`SYSLOG_OTHER_SENSOR\` when another
would); \`--source ADDRESS\` sends from one of this machine's addresses, e.g. one in the sensor's \`--from\`
network. With \`--relp\` it speaks RELP over TLS
(default port \`syslog.relpListen\`'s), up to 128 messages unanswered per session, and prints how many the
collector answered 200 OK (stored, or counted as not a threat); any other answer, or none, exits 69
(UNAVAILABLE). \`--format\`, \`--tcp\`, \`--relp\`, \`--client-cert\`, \`--client-key\` and \`--source\` are for
\`send syslog\` only, \`--key\`, \`--key-file\`, \`--batch\`, \`--repeat\` and \`--rate\` for \`firewall\` and
\`generic\` only: given to the other they exit 64 (USAGE) naming them, and nothing is sent.

**A key given with \`--key\` is visible to every user of the machine** in \`ps\` and \`/proc/PID/cmdline\`, and
lands in shell history. Prefer \`--key-file\` or \`THREATCOL_KEY\`.
`,
  options: {
    '--data': `the body, sent exactly as given: inline, read from FILE (\`@FILE\`), or read from standard input (\`-\`)`,
    '--sample': `instead of \`--data\`: a realistic random record of that kind (documentation-range and private addresses, common ports, PAN-OS style threat names such as \`SSH2 Login Attempt(31914)\`, for firewall a \`time_received\` in \`YYYY/MM/DD HH:MM:SS\` and a \`severity\`)`,
    '--format': `syslog: the message format, \`panos\`, \`cef\`, \`fortinet\` or \`suricata\``,
    '--tcp': `syslog: plain TCP instead of TLS (the collector's \`syslog.tcpListen\`)`,
    '--relp': `syslog: RELP over TLS (the collector's \`syslog.relpListen\`): each message is answered once stored`,
    '--client-cert': `syslog over TLS: present this PEM client certificate (the one the sensor pins)`,
    '--client-key': `syslog over TLS: the PEM key of \`--client-cert\``,
    '--batch': `with \`--sample\`: a JSON array of N records (1-1000) per request`,
    '--url': `the collector's base URL (environment \`THREATCOL_URL\`); default \`https://localhost:<server.port>\` from the configuration. A URL ending in the endpoint (\`https://host/firewall\` for \`send firewall\`) is used as given, one ending in the other endpoint is refused (USAGE, the URL shown), any other path is a prefix (\`https://proxy/threatcol\` posts to \`/threatcol/firewall\`); only \`https://\`: the key is never sent over plain HTTP`,
    '--sensor': `sensor name, sent as \`X-SENSOR_NAME\` (environment \`THREATCOL_SENSOR\`); \`send syslog\`: the sensor to test, read from this collector's registry (\`--config\`, \`--data-dir\`): its format unless \`--format\`, and the connection refused before sending unless the collector would take it as this sensor's`,
    '--source': `syslog: send from this local address (one of this machine's), e.g. a test address in the firewall's network that a sensor's \`--from\` names; the collector sees it as the sender's address`,
    '--key': `sensor key, sent as \`X-AUTH_KEY\` (environment \`THREATCOL_KEY\`); visible to other users in \`ps\``,
    '--key-file': `read the key from the first line of FILE (keep it mode 0600: a file others can read gets a warning)`,
    '--ca': `verify the collector's certificate against this PEM CA (or the self-signed \`<data-dir>/tls/cert.pem\` itself) instead of the system CAs`,
    '--fingerprint': `pin the collector's certificate by its SHA-256 fingerprint (printed by \`threatcol serve\` at start; \`AB:CD:…\` or plain hex, any case): any other certificate is refused before anything is sent, and no CA is needed`,
    '--insecure': `do not verify the certificate at all; prints a warning on stderr. For a first test only`,
    '--count': `load mode: send N requests (each one record, or an array of \`--batch B\` records), every record a different one, and print a summary of what the collector stored`,
    '--repeat': `load mode: send the same bodies again and again instead (up to 64 samples, or the \`--data\` body, which needs it): the collector stores each once and answers the rest as retried deliveries (\`/generic\` requests carry an \`Idempotency-Key\` per body)`,
    '--concurrency': `load mode: over C keep-alive connections (an undici Pool, one request in flight per connection); default 1`,
    '--rate': `load mode: at most R requests per second in all (paced evenly from the start); default: as fast as answers come`,
    '--json': `print \`{"status": 200, "body": {...}}\` (or the load summary) as one JSON document`,
    '--config': `configuration file (environment \`THREATCOL_CONFIG\`), read only for the default URL's port and the data directory`,
    '--data-dir': `for a local URL (\`localhost\`, \`127.x.x.x\`, \`::1\`) with none of \`--ca\`, \`--fingerprint\`, \`--insecure\`: trust this data directory's \`tls/cert.pem\` (environment \`THREATCOL_DATA_DIR\`; default: the data directory as \`serve\` would use it)`,
  },
  sections: [
    {
      title: `Load mode`,
      body: `
\`--count N\` turns \`send\` into the load generator used by the benchmark and the
[performance figures](performance.md):

\`\`\`sh
threatcol send firewall --sample --count 4000 --concurrency 16 \\
  --url https://collector:443 --sensor bench --key-file bench.key --fingerprint "$FP" --json
\`\`\`

Each record differs from every other (firewall: its source port, then its \`time_received\` second;
generic: its destination address), written into 64 sample records built once, so the generator stays
cheap and the collector stores them all. It prints a summary (requests, records stored and duplicates as
the collector's answers count them, requests/s and records/s, p50/p90/p99/max latency, count per HTTP
status, connection errors); with \`--json\` exactly one object. This one was measured on the 2-core
development machine while other work ran on it (load average 17), collector and generator on the same
box; \`threats stats\` then counted the 4000 records in the store:

\`\`\`json
{"requests":4000,"records":4000,"stored":4000,"duplicates":0,"durationMs":12183.504,"requestsPerSecond":328.313,"recordsPerSecond":328.313,"latencyMs":{"p50":32.111,"p90":96.447,"p99":254.463,"max":440.698},"statuses":{"200":4000},"errors":0}
\`\`\`

\`records\` counts the records of requests answered 2xx, \`stored\` those the collector stored and
\`duplicates\` those it had stored before (\`--repeat\`: with deduplication on, \`dedupe.windowSeconds\`,
a body sent again within the window is a retried delivery, answered 200 with \`"duplicates"\`);
\`statuses\` plus \`errors\` add up to \`requests\`.
Exit 0 only when every request was answered 2xx; otherwise the exit status of the first error code
answered, or 69 when requests failed to connect. The collector's per-sensor rate limit
(\`rateLimit.recordsPerSecond\`, 5000 by default) applies to the generator too: past it the summary shows
\`429\` answers and the command exits 69 (\`RATE_LIMITED\`); raise the limit, or use several sensors, to
measure the collector rather than the limit.
`,
    },
  ],
  environment: {
    THREATCOL_URL: `the collector's base URL, when \`--url\` is not given.`,
    THREATCOL_SENSOR: `the sensor name, when \`--sensor\` is not given.`,
    THREATCOL_KEY: `the sensor key, when neither \`--key\` nor \`--key-file\` is given; unlike \`--key\`, not visible in \`ps\`.`,
  },
};
