// Names of the entries in the data directory (DESIGN 4): for the files backend, for `check` and for the
// safety check of `serve`.

/** The sensor registry (lowdb), written only by the CLI under a lock. */
export const REGISTRY_FILE = 'sensors.json';
/** Per-sensor activity, written only by the daemon. */
export const STATS_FILE = 'sensor-stats.json';
/** The silent sensors the daemon reported and has not seen send again, written only by the daemon. */
export const SILENCES_FILE = 'sensor-silences.json';
/** The record segments' directory. */
export const THREATS_DIR = 'threats';
/** Outputs (DESIGN 13): per output its cursor, dead letters and the records retention skipped for it. */
export const OUTPUTS_DIR = 'outputs';
