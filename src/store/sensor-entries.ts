// Which registry entries are sensors: one check for every entry either backend reads (sensors.json, the KV
// bucket), so a malformed one is skipped and reported while the others keep working, instead of taking
// down every collector that reads it.
import type { Logger } from 'pino';
import { parseExpectEvery } from '../config/expect-every.js';
import { isValidTimezone } from '../config/load-config.js';
import { READABLE_SENSOR_NAME, type RejectedEntry, type Sensor } from './registry.js';
import { syslogProblem } from './sensor-syslog.js';

const NOT_JSON = Symbol('not JSON');

const isString = (v: unknown): v is string => typeof v === 'string';
const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const isTime = (v: unknown): boolean => isString(v) && !Number.isNaN(Date.parse(v));

/**
 * Why `value` is not a sensor every reader can use (auth, the syslog listener, `sensor list`, `check`), or null
 * when it is one: every field, its syslog identity included.
 */
export function sensorProblem(value: unknown): string | null {
  if (value === NOT_JSON) return 'not JSON';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const s = value as Record<string, unknown>;
  if (!isString(s.name) || !READABLE_SENSOR_NAME.test(s.name)) return 'name is not a valid sensor name';
  if (!isString(s.description)) return 'description is not a string';
  if (!isStringOrNull(s.timezone) || (s.timezone !== null && !isValidTimezone(s.timezone))) {
    return 'timezone is neither null nor an IANA time zone';
  }
  if (s.status !== 'active' && s.status !== 'revoked') return 'status is neither "active" nor "revoked"';
  if (!isTime(s.created_at)) return 'created_at is not a time';
  if (s.revoked_at !== null && !isTime(s.revoked_at)) return 'revoked_at is neither null nor a time';
  if (!Array.isArray(s.keys)) return 'keys is not a list';
  for (const k of s.keys as unknown[]) {
    const key = k as Record<string, unknown> | null;
    if (typeof key !== 'object' || key === null || !isString(key.hash) || !isTime(key.created_at)) {
      return 'a key lacks its hash or created_at';
    }
    if (key.expires_at !== null && !isTime(key.expires_at))
      return 'a key has an expires_at that is not a time';
  }
  if (
    s.expect_every !== undefined &&
    !(isString(s.expect_every) && parseExpectEvery(s.expect_every) !== null)
  ) {
    return 'expect_every is neither "off" nor a duration of at least 1s';
  }
  // The listener builds its per-connection look-up from this: a wrong type here would throw there.
  return s.syslog === undefined ? null : syslogProblem(s.syslog);
}

/** The valid sensors of a registry's entries, and the others with why (`entry` names each in reports). */
export function sortEntries(entries: Iterable<{ entry: string; value: unknown }>): {
  sensors: Sensor[];
  rejected: RejectedEntry[];
} {
  const sensors: Sensor[] = [];
  const rejected: RejectedEntry[] = [];
  for (const { entry, value } of entries) {
    const reason = sensorProblem(value);
    if (reason === null) sensors.push(value as Sensor);
    else rejected.push({ entry, reason });
  }
  return { sensors, rejected };
}

/** The parsed JSON of an entry's text, or a value sensorProblem() refuses (never throws). */
export function parseEntry(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/**
 * Logs the rejected entries at warn when they differ from the last ones logged, so a registry re-read every
 * few seconds with the same bad entry says it once, not at every read; an entry fixed or removed says so too.
 */
export function createRejectedReport(logger: Logger, registry: string): (rejected: RejectedEntry[]) => void {
  let last = '';
  return (unsorted) => {
    const rejected = [...unsorted].sort((a, b) => (a.entry < b.entry ? -1 : a.entry > b.entry ? 1 : 0));
    const signature = JSON.stringify(rejected);
    if (signature === last) return;
    const wasBad = last !== '' && last !== '[]';
    last = signature;
    if (rejected.length > 0) {
      logger.warn(
        { registry, rejected },
        `${rejected.length} sensor registry entr${rejected.length === 1 ? 'y is' : 'ies are'} not valid and skipped; the other sensors keep working`,
      );
    } else if (wasBad) {
      logger.info({ registry }, 'every sensor registry entry is valid again');
    }
  };
}
