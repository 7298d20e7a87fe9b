// The store format version: which layout of the kept data (files on disk, NATS stream and buckets) this build
// reads and writes. `threatcol --version` prints it.

/**
 * The version of the store's layout: for the files backend, the data directory's entries and their contents
 * (`sensors.json` with its own `version` field, `sensor-stats.json`, the `threats/` segment names and the stored
 * record's fields, `tls/`); for NATS, the stream's and buckets' names, subjects and message shapes.
 *
 * A release that changes any of these so that the previous release could no longer read them, or would read
 * them wrongly, bumps this number and ships the migration from the previous number, which an upgrade runs
 * before the new daemon starts (the Debian package's postinst). A change that older builds read correctly
 * (a new optional field in a stored record, a new config key) does not bump it.
 *
 * 1: the layout of threatcol 0.1.0, the first release.
 */
export const STORE_FORMAT_VERSION = 1;
