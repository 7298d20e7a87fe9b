// Reference prose of `threatcol serve --workers`: several processes on several cores.

export const severalCores = {
  title: `Several cores: \`--workers\``,
  body: `
One process uses one core: about 6,000-9,000 single firewall records/s over keep-alive connections, or
about 100,000 records/s sent in arrays of 100 (see [docs/performance.md](performance.md#capacity-for-planning)).
\`--workers N\` (config \`server.workers\`, default \`1\`) runs a primary process that forks N workers with
node:cluster. The primary answers no request: it accepts connections on the listening socket (also the one
systemd passes with socket activation) and hands them to the workers in turn, restarts a worker that dies,
forwards SIGHUP and SIGTERM, and is the only writer of \`sensor-stats.json\` (the workers send it their
counts every second over the IPC channel). Give it at most the cores the box has idle beyond other
work. Per worker, count on the single-process figures above as a ceiling and on up to 1.7x (keep-alive)
or 1.15x (batched) the CPU per record, so roughly 0.6-0.75x (keep-alive) and 0.9-1.1x (batched) of a
single process's rate per core added.
Measured here, on a 2-core box where the load generator itself takes a core, 1 to 2 workers gave
0.88x-1.75x of one worker's keep-alive throughput depending on the generator and the neighbours, and
0.99x-1.41x on batched records, with 1.34-1.70x (keep-alive) and 0.91-1.14x (batched) the server CPU per
request; the primary used 0.25 % of the CPU ([docs/performance.md](performance.md#several-cores-serve---workers),
\`npm run bench:workers\`). Scaling on a box with idle cores is not measured yet.

- **Records**: each worker appends to its own segments, \`threats/YYYYMMDD-wK-NNNNNN.ndjson\` (K = the
  worker's slot, 1..N, kept when it is restarted). \`threats tail\`, \`threats stats\`, the dashboard, retention
  and \`check\` read all segments of a day as one log ordered by record id (ids are time-ordered UUIDv7);
  \`tail\` follows every worker's new lines. Retention runs in worker 1 and never deletes the newest segment of
  any worker (the one it may be writing). Switching between \`--workers\` values needs nothing: old segments
  are read alongside the new ones.
- **Configuration**: the primary reads it; each worker runs what the primary runs, handed over when it starts
  (also when restarted after a crash: a file edited since and not yet applied, or broken, changes nothing for
  it) and with each reload.
- **Signals**: SIGHUP to the primary (\`systemctl reload\`) makes every worker apply what the primary applied
  and re-read the registry and the certificate; a revoked sensor is refused by every worker within a second
  (each watches the registry).
  SIGTERM stops every worker gracefully within the same bound as one process (8 s of grace; a worker still
  running after 9.5 s is killed) and exits 0 once all are gone.
- **Faults**: a worker that dies (killed, crashed) is logged (\`worker died; restarting it\`, with its exit
  code or signal) and restarted after 0.1 s, doubling up to 30 s while it keeps dying within a minute of its
  start. Everything it acknowledged is on disk (200 means synced); a torn last line in its segment is cut
  when it restarts. A worker exiting **74** (a failed \`fdatasync\`) or **78** (its certificate unusable), or
  one that cannot start when the daemon starts, stops the whole daemon with that status, so systemd sees it
  and does not loop.
- **Limits stay per daemon**: the primary holds each sensor's token bucket and the workers lease tokens
  from it in small chunks (a twentieth of a second's worth), so a sensor gets \`rateLimit.recordsPerSecond\`
  in all, however its connections are spread; tokens a worker leased and did not use within a second are
  dropped (the limit can only err on the strict side). The primary also counts every worker's connections:
  \`server.maxConnectionsPerAddress\` and \`server.maxConnections\` hold for the daemon (a connection over a cap
  is closed within an IPC round trip of being accepted). The memory bounds \`server.maxInflightBodyBytes\`,
  \`store.queueMaxRecords\` and \`store.queueMaxBytes\` are split evenly between the workers (a worker's
  share of \`server.maxInflightBodyBytes\` is never less than 4 × \`server.maxBodyBytes\`, so that one sensor's
  quarter holds one largest body: with many workers the total may exceed the setting).
- **Syslog** (\`syslog.listen\`, \`syslog.tcpListen\`): every worker serves it on the shared ports, with
  the same guarantees as one process; how its caps, counters and samples go through the primary is in
  [docs/syslog.md](syslog.md#under-serve---workers).
- **Logs**: workers' lines carry \`worker\` (slot) and \`pid\`; the primary logs \`threatcol is listening\` once
  every worker listens, with the list of workers.
- **systemd**: the shipped units work unchanged (\`KillMode=control-group\` signals the workers too, which
  stop gracefully as well). Each process runs 11 threads and takes about 85 MB resident when idle,
  100-130 MB under load. \`TasksMax=256\` therefore allows up to about 20 workers and \`MemoryMax=1G\` about 6
  under load: for more, raise both in a drop-in (\`systemctl edit threatcol\`), e.g. \`TasksMax=12*(N+1)\` and
  \`MemoryMax=150M*(N+1)\`.
- **Deduplication of retried deliveries** holds across workers: with the files backend the primary keeps
  the one dedupe window (rebuilt at start from every worker's newest segments) and each worker claims a
  request's keys there before writing (one IPC round trip per request that carries keys), so a retry that
  reaches another worker than the first delivery (a retry usually comes on a new connection, and new
  connections go to the workers in turn) is answered as a duplicate, and identical deliveries arriving at
  once on different workers are stored once. A worker that dies while storing releases its keys, so the
  sender's retry is stored; if it died after its records were durable but before telling the primary (a
  window of microseconds), that retry is stored a second time. With the NATS backend the stream
  deduplicates for every worker and collector.
`,
};
