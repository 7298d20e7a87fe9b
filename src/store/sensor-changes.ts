// The registry's changes as pure functions on one Sensor: one set of rules for both backends (the files
// registry applies them under its lock, the NATS registry re-applies them after a revision conflict).
import { ThreatcolError } from '../errors.js';
import { type NewSensor, SENSOR_NAME_PATTERN, type Sensor, type SensorChanges } from './registry.js';

/** Expired key hashes are kept this long after expiry (to tell "expired" from "never issued" when debugging). */
const EXPIRED_KEY_RETENTION_MS = 7 * 86_400_000;

export function checkSensorName(name: string): void {
  if (!SENSOR_NAME_PATTERN.test(name)) {
    throw new ThreatcolError(
      'INVALID_ARGUMENT',
      `invalid sensor name "${name}": use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
}

export function newSensor(input: NewSensor, keyHash: string, at: string): Sensor {
  return {
    name: input.name,
    description: input.description ?? '',
    timezone: input.timezone ?? null,
    status: 'active',
    created_at: at,
    revoked_at: null,
    keys: [{ hash: keyHash, created_at: at, expires_at: null }],
    ...(input.syslog ? { syslog: input.syslog } : {}),
    ...(input.expect_every === undefined ? {} : { expect_every: input.expect_every }),
  };
}

/** `sensor set`'s changes applied to `sensor` in place (both backends: under the lock, or per revision). */
export function applySensorChanges(sensor: Sensor, changes: SensorChanges): Sensor {
  if (changes.description !== undefined) sensor.description = changes.description;
  if (changes.timezone !== undefined) sensor.timezone = changes.timezone;
  if (changes.syslog === null) delete sensor.syslog;
  else if (changes.syslog !== undefined) sensor.syslog = changes.syslog;
  if (changes.expect_every === null) delete sensor.expect_every;
  else if (changes.expect_every !== undefined) sensor.expect_every = changes.expect_every;
  return sensor;
}

export function revokeSensor(sensor: Sensor, at: number): Sensor {
  if (sensor.status === 'revoked') return sensor;
  return { ...sensor, status: 'revoked', revoked_at: new Date(at).toISOString() };
}

export function rotateSensor(sensor: Sensor, keyHash: string, at: number, graceMs: number): Sensor {
  if (sensor.status === 'revoked') {
    throw new ThreatcolError(
      'SENSOR_REVOKED',
      `sensor "${sensor.name}" is revoked; add a new sensor instead of rotating its key`,
    );
  }
  const until = at + graceMs;
  const untilIso = new Date(until).toISOString();
  const keys = sensor.keys
    .filter((k) => k.expires_at === null || Date.parse(k.expires_at) > at - EXPIRED_KEY_RETENTION_MS)
    // A key already ending sooner keeps its earlier end: rotation never extends a key's life.
    .map((k) =>
      k.expires_at === null || Date.parse(k.expires_at) > until ? { ...k, expires_at: untilIso } : k,
    );
  keys.push({ hash: keyHash, created_at: new Date(at).toISOString(), expires_at: null });
  return { ...sensor, keys };
}

/** The same sensor in every field a registry stores, whatever the key order of the JSON it came from. */
export function sameSensor(a: Sensor, b: Sensor): boolean {
  return JSON.stringify(canonicalSensor(a)) === JSON.stringify(canonicalSensor(b));
}

/** Only the fields of a Sensor, in one order (what `importSensor` stores). */
export function canonicalSensor(s: Sensor): Sensor {
  return {
    name: s.name,
    description: s.description,
    timezone: s.timezone,
    status: s.status,
    created_at: s.created_at,
    revoked_at: s.revoked_at,
    keys: s.keys.map((k) => ({ hash: k.hash, created_at: k.created_at, expires_at: k.expires_at })),
    ...(s.syslog
      ? {
          syslog: {
            format: s.syslog.format,
            from: [...s.syslog.from],
            client_cert_sha256: [...s.syslog.client_cert_sha256],
            ...(s.syslog.client_ca === undefined
              ? {}
              : { client_ca: s.syslog.client_ca, client_cn: s.syslog.client_cn ?? '' }),
          },
        }
      : {}),
    ...(s.expect_every === undefined ? {} : { expect_every: s.expect_every }),
  };
}
