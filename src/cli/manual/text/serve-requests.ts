// Reference prose of what `threatcol serve` does with each request, and every bound a sender can meet.

export const eachRequest = {
  title: `Each request`,
  body: `
Each request is checked in this order, cheapest and safest first, so an unauthenticated client never
makes the server parse a body: path (404) → method (405) → both auth headers present (401 \`AUTH_MISSING\`)
→ sensor and key (401 \`AUTH_INVALID\`, the same answer for an unknown name and a wrong key, compared in
constant time) → revoked (403) → \`Content-Type: application/json\`, parameters and any case allowed (415)
→ body size, counted while streaming and after gzip (413, connection closed) → JSON (400 \`INVALID_JSON\`
with the position) → schema (400 \`VALIDATION_FAILED\`, every bad field named) → per-sensor rate limit
(429, \`Retry-After\`) → stored and synced (503 \`UNAVAILABLE\` with \`Retry-After\` when the store is
overloaded or failing) → **200** \`{"accepted": N, "ids": ["<uuidv7>", ...]}\`.

- **Headers**: \`X-AUTH_KEY\` and \`X-SENSOR_NAME\`, names in any case. The hyphen forms \`X-AUTH-KEY\` and
  \`X-SENSOR-NAME\` are accepted too (nginx and Apache drop header names with underscores by default). If both
  spellings are sent with different values, or a header is repeated with different values, the request is
  refused (\`AUTH_INVALID\`). An \`Authorization\` header (the firewall's dummy username/password) is ignored.
  A keep-alive connection's later requests with the same two headers are not hashed again: they are judged by
  what the connection proved, until the sensor is revoked, its keys change or the proven key expires.
- **Batches**: the body is one record or a JSON array of 1 to 1000 records (\`server.maxRecordsPerRequest\`);
  all or nothing: one bad record rejects the request, \`details\` names its index (\`/3/src\`), nothing is stored.
- **gzip**: \`Content-Encoding: gzip\` is accepted; the size limit applies after decompression.
- **Firewall records** (\`/firewall\`): the 11 fields of the spec are required. \`src\`/\`dst\` must be IPv4 or
  IPv6 addresses; \`sport\`/\`dport\` integers 0-65535, and a string of digits (\`"443"\`) is converted, because
  firewall templates often quote every variable (\`null\`, booleans, \`""\`, \`"12abc"\`, \`"0443"\` are refused).
  \`time_received\` must be a real calendar time \`YYYY/MM/DD HH:MM:SS\`; it carries no zone, so it is read in
  the sensor's zone (\`sensor add --timezone\`, else \`firewall.defaultTimezone\`, default UTC) and stored as UTC
  in \`detected_at\` (a local time that occurs twice at a DST change takes the earlier instant; one skipped
  by the change is moved forward). \`threat_name\`/\`threatid\` of the form \`EICAR Test File(86708)\` are split
  into \`threat\` and \`threat_id\`. \`app\`, \`subcategory_of_app\`, \`thr_category\` and \`proto\` may be empty; every
  string is at most 1 KiB. Up to 64 extra fields (beside the record's own) are kept in \`original\` (scalars
  only, names ≤ 128 characters, strings ≤ 1 KiB): templates vary. More are refused with \`VALIDATION_FAILED\`,
  "at most 64 extra fields". A \`criticality\` sent to \`/firewall\` is ignored. See [Limits](#limits).
- **Criticality on /firewall** is derived, never taken from the sender: from the optional \`severity\` field
  (PAN-OS \`$severity\`: informational, low, medium, high, critical in any case → 0..4), else from
  \`firewall.criticalityByCategory\` keyed by \`thr_category\` (lower case), else \`firewall.defaultCriticality\`
  (2). The stored \`criticality_source\` says which (\`severity\`, \`category\`, \`default\`).
- **Quoting repair**: PAN-OS pastes variable values into the template without JSON escaping. A \`/firewall\`
  body that is invalid JSON only because a value holds a raw \`"\` or \`\\\` is repaired, accepted, and stored
  with \`"repaired": true\`.
- **Generic records** (\`/generic\`): the 6 fields of the spec; addresses IPv4/IPv6, \`destination_port\`
  0-65535, \`criticality\` 0-4 (digit strings converted as above), \`protocol\` and \`threat\` non-empty
  (\`threat\` up to 4 KiB). Extra fields are kept as on \`/firewall\`.
- **Timeouts and caps** against slow or abusive clients: TLS handshake 10 s, request headers 10 s, whole
  request 20 s, keep-alive idle 60 s, 4096 connections in all and 256 per client address (IPv6 per /64;
  all configurable; see [Reverse proxy](operations.md#reverse-proxy-and-network) for proxies and NAT). A
  client that hangs up during the TLS handshake (one that does not trust the certificate) gives its
  connection back at once, not at the handshake timeout. TLS 1.2
  offers only ECDHE suites with AES-GCM or ChaCha20-Poly1305; TLS session tickets are on, their keys held in
  memory only and replaced every 12 h (\`tls.ticketKeyRotationHours\`), so a leaked key cannot decrypt
  recorded sessions for long. Node keeps one ticket key at a time: a sender resuming with a ticket from
  before a rotation gets a full handshake (with \`--workers\`, each worker has its own keys).
- **Logging** (pino on stdout: in the journal readable lines with their syslog priority, NDJSON elsewhere or with
  \`--log-format json\`): accepted requests at \`debug\` (\`"msg":"accepted"\`
  with path, sensor, client address and record count); rejected ones at \`warn\` with method, path, status,
  sensor, client address and code, at most one line per sensor (or, when unauthenticated, per address; IPv6
  per /64, as the connection caps count) and code every 10 s, with the count suppressed since; every 500
  \`INTERNAL\` at \`error\` with its stack, never rate-limited (report it with that line); connections that
  fail before HTTP (TLS alerts, plain HTTP, version or cipher mismatch, handshake timeout) at \`warn\` with the
  client address and a \`reason\` (see [Troubleshooting](operations.md#troubleshooting)), once per address and
  reason every 10 s. Whatever the number of senders, at most 50 of these warn lines are written per 10 s
  (\`log.rejectIntervalMs\`); one line then says how many more were not (\`"suppressed": N\`), so a flood stays
  under journald's rate limit and the collector's own errors stay visible. A client that only hangs up is
  logged at \`debug\`; a \`summary\` line at \`info\` every minute gives the totals and the 20 largest entries of
  records accepted and requests rejected by sensor (or address) and code and failed connections by address
  and reason, with \`acceptedOmitted\`, \`rejectedOmitted\`, \`failedConnectionsOmitted\` counting the entries
  left out (a few KB at most; journald splits lines past 48 KB). The key never appears in a log.
`,
};

export const limits = {
  title: `Limits`,
  body: `
Every bound a sender can meet, and the key that sets it (see [Configuration](configuration.md)):

| bound | default | key | past it |
|---|---|---|---|
| request body, after gzip decompression | 4 MiB | \`server.maxBodyBytes\` | 413 \`BODY_TOO_LARGE\`, connection closed |
| records in one request (JSON array) | 1000 | \`server.maxRecordsPerRequest\` | 400 \`VALIDATION_FAILED\` |
| one record's JSON text | 16 KiB | \`server.maxRecordBytes\` | 400 \`VALIDATION_FAILED\` naming \`server.maxRecordBytes\` |
| field name length | 128 characters | fixed | 400 \`VALIDATION_FAILED\` |
| extra fields per record | 64 (scalars) | fixed | 400 \`VALIDATION_FAILED\` |
| string value length | 1 KiB (\`/generic\` \`threat\`: 4 KiB) | fixed | 400 \`VALIDATION_FAILED\` |
| JSON nesting depth (also after the quoting repair) | 64 | fixed | 400 \`INVALID_JSON\` |
| duplicate keys in an object | none allowed | fixed | 400 \`INVALID_JSON\` naming the key |
| records per second per sensor | 5000, bursts of 10000 | \`rateLimit.recordsPerSecond\`, \`rateLimit.burst\` | 429 \`RATE_LIMITED\` + \`Retry-After\` |
| body bytes per second per sensor, failed requests included | 8 MiB, bursts of one largest body | \`rateLimit.bytesPerSecond\` | 429 \`RATE_LIMITED\` + \`Retry-After\` |
| bodies held in memory by all requests together | 256 MiB | \`server.maxInflightBodyBytes\` | 503 \`UNAVAILABLE\` + \`Retry-After\` |
| bodies held in memory by one sensor | a quarter of \`server.maxInflightBodyBytes\` | fixed share | 503 \`UNAVAILABLE\` + \`Retry-After\` (other sensors unaffected) |
| a request body that receives nothing | 5 s (ended 5-6.25 s after its last byte: checked every quarter of the limit) | \`server.bodyStallTimeoutMs\` | 408 \`REQUEST_TIMEOUT\`, connection closed |
| connections, in all / per client address (IPv6: /64), the HTTPS port and the syslog listeners together | 4096 / 256 | \`server.maxConnections\`, \`server.maxConnectionsPerAddress\` | the oldest connection with no request whose sensor key or feed password was found good is closed for a newcomer; refused when none is left |
| TLS handshake / headers / whole request / keep-alive idle | 10 s / 10 s / 20 s / 60 s | \`server.*TimeoutMs\` | connection closed (408 where HTTP allows) |

With these, one sensor can add at most \`rateLimit.bytesPerSecond\` of request bodies a second, and a stored
line is at most \`server.maxRecordBytes\` plus the fields derived from the record (about 3 KiB): plan disk from
the record rate you expect, not from these ceilings ([Retention and disk use](operations.md#retention-and-disk-use)).
`,
};
