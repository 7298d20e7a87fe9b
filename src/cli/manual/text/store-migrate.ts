// Reference prose of `threatcol store migrate --to nats`: copying a files store into NATS.
import type { CommandManual } from '../command-manual.js';

export const storeMigrateManual: CommandManual = {
  description: `
\`\`\`sh
threatcol store migrate --to nats --dry-run     # what would be copied; stores nothing
threatcol store migrate --to nats               # copy sensors, decisions and records into the configured NATS
\`\`\`

Copies the data directory's files store into the NATS JetStream backend configured as for \`serve\` (\`nats.*\`
in the config file, or \`THREATCOL_NATS_SERVERS\` and the other \`THREATCOL_NATS_*\` variables), whatever
\`store.backend\` says; the steps are in [Running several collectors](operations.md#running-several-collectors).
Stop \`serve\` first: records it stores during the copy are not copied (running the command again copies
them). As for every command, \`--data-dir\` and \`--config\` choose the data directory (the source) and the
configuration (which names NATS).

- **Sensors** go to the bucket \`threatcol_sensors\` exactly as they are: key hashes, status, revocation time,
  rotated keys with their grace expiry, description, time zone, creation time. A sensor already in NATS with
  the same content is skipped; one with different content (changed in NATS since, or added there under the
  same name) is left as it is and reported: the command copies everything else, then exits 65
  (\`SENSOR_EXISTS\`) naming it. \`--overwrite-sensors\` replaces such sensors with the files store's version.
  One deleted in NATS since an earlier run copied it (\`sensor delete\` there: its key withdrawn) stays
  deleted, unless the files store created it or issued it a key (\`sensor rotate\`) after the deletion: the
  summary names it (\`removed_in_target\` with \`--json\`) and the command still exits 0. To have it on NATS
  again, \`sensor add\` it there (a new key).
- **Decisions** (the blocklist's state: blocks, allow entries, feeds with their password hashes, removed
  blocks that old records must not make again, repeat offenders' counts, feeds' last fetches, the rules'
  history) go to the bucket \`blocklist.bucket\` names (\`threatcol_decisions\`) as they are, in one write:
  firewalls pull the same feeds with the same credentials from a collector on NATS, and nothing an allow entry
  protected is blocked after the move. An entry NATS already holds is skipped when it is the same, and left as
  it is when it differs (a collector on NATS made or changed it since: its own is newer). One removed in NATS
  since an earlier run copied it (\`block remove\`, \`allow remove\`, \`feed remove\` there) stays removed,
  unless the files store's was made after the removal (a block or allow entry added again, a feed rotated); a
  block removed from the files store since is removed from NATS too. The summary counts both
  (\`left_in_target\` with \`--json\`, as \`KIND KEY\`) and the command still exits 0. The files store keeps no
  mark of an allow entry's or a feed's removal, so one removed there after an earlier run stays in NATS, as one
  made in NATS does: the summary names every allow entry and feed NATS holds and the files store does not
  (\`only_in_target\`); remove by hand those the files store dropped (\`allow remove\`, \`feed remove\` on NATS).
- **Records** go to the stream \`THREATCOL\` unchanged (every field, \`id\` and \`received_at\` included), oldest
  first, each published with its id as \`Nats-Msg-Id\`. Before copying, the command reads the ids already in
  the stream and skips those records, so a second run, or one after an interruption, stores nothing twice,
  however long after the first (JetStream's duplicate window alone lasts \`dedupe.windowSeconds\`). Only those
  ids are held in memory (a million fit in a 128 MB heap: a run with \`NODE_OPTIONS=--max-old-space-size=128\`
  copied a million records); records are copied as they are read, a thousand at a time.
- **Order.** Reads by time on NATS (a look-up's window, \`source show\`, a page's \`before\`) take the stream to
  hold records in the order they were received, within 5 minutes, and find where a window ends by halving its
  sequences. Copied records go after what the stream already holds: migrate before any collector writes to it,
  as the steps say. Copied into a stream that held newer records (a second files store migrated later, or a
  return to files and a re-run), they sit out of that order, and a look-up whose window ends before the newer
  records may miss them (\`threats tail\` and outputs read every record).
- **Lines that are not records** (a damaged line, \`null\`, two objects in one line, a record lacking a field or
  with a field of another type: the shape in [records.md](records.md)) are skipped, never published: the summary counts them
  (\`not_records\` with \`--json\`) and the log names the first.
- **Not copied**: the sensors' counters (\`sensor-stats.json\`: last seen, last address, records received,
  rejections); they start from zero on NATS. Nor the silences reported (\`sensor-silences.json\`): a sensor
  still silent is given its interval again by the collector on NATS and reported once more if it stays quiet.
  The data directory is only read.
- The stream's \`store.retention\` limits count from when a record was stored in NATS, so migrated records
  are kept up to \`store.retention.days\` after the migration, not after they were received; and a
  \`store.retention.maxBytes\` smaller than the files store makes NATS discard the oldest copied records as it
  fills (a re-run would copy those again: it skips only what the stream still holds).
- Progress goes to stderr every 2 s on a big store; the summary to stdout: \`records 1000 copied, 0 already
  present; sensors 3 copied, 0 already present, 0 conflicting; decisions 14 copied, 0 already present (1.2 s)\`.
- Measured here (one local nats-server, 1 replica, 2 cores shared with other work): 100,000 records in
  4.0-4.6 s (about 22,000 records/s), 1,000,000 records (320 MB of segments) in 42 s; a second run over the
  million, copying nothing, 13-15 s.
`,
  options: {
    '--to': `the backend to copy into (\`nats\`, the only one; anything else is a usage error, exit 64)`,
    '--dry-run': `count what would be copied (records, sensors, decisions, conflicts); store nothing (the empty stream and bucket are created if missing, as by every command on NATS)`,
    '--overwrite-sensors': `replace sensors that exist in NATS with different content instead of reporting them`,
    '--json': `print \`{"dry_run", "source", "target", "records": {"read", "copied", "already_present"}, "sensors": {"copied", "already_present", "conflicting", "overwritten", "removed_in_target"}, "decisions": {"copied", "already_present", "left_in_target", "only_in_target"}, "seconds"}\` (sensor fields, \`left_in_target\` and \`only_in_target\` are lists of names)`,
  },
  exitStatus: `
NATS unreachable: exit 69 (\`UNAVAILABLE\`) naming the servers, after \`nats.publishTimeoutMs\`; run it again
when NATS is back. A data directory that does not exist: exit 66 (\`NO_DATA_DIR\`). A sensor that exists in
NATS with different content: exit 65 (\`SENSOR_EXISTS\`) after everything else is copied.
`,
};
