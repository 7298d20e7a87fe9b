// The sensor registry interface and its shape: who may send, with which key hashes, in which time zone.
import { ThreatcolError } from '../errors.js';

export type SensorStatus = 'active' | 'revoked';

export interface SensorKey {
  /** `sha256:<hex>` of the key; the key itself is never stored. */
  hash: string;
  created_at: string;
  /** Set when a rotation retires this key: refused after this instant. */
  expires_at: string | null;
}

export interface Sensor {
  name: string;
  description: string;
  /** IANA zone for the firewall's zone-less time_received; null: the configured default. */
  timezone: string | null;
  status: SensorStatus;
  created_at: string;
  revoked_at: string | null;
  keys: SensorKey[];
  /** How the sensor sends syslog (docs/syslog.md); absent: it does not. */
  syslog?: SensorSyslog;
  /**
   * How often it is expected to send (a duration such as `1h`, or `off`): silent after that long without an
   * accepted record (docs/operations.md). Absent: `sensors.expectEvery`. Registries written before it read as absent.
   */
  expect_every?: string;
}

/** A sensor's syslog identity: its message format, and who it is (source networks and/or client certificates). */
export interface SensorSyslog {
  format: string;
  /** CIDRs (`192.0.2.7/32`, `2001:db8::/64`) a connection may come from. */
  from: string[];
  /** SHA-256 fingerprints (lower-case hex, no colons) of the client certificates it may present over TLS. */
  client_cert_sha256: string[];
  /** PEM of the CA(s) that issue its client certificates (`--client-ca`); with `client_cn`, absent otherwise. */
  client_ca?: string;
  /** The subject CN or SAN DNS name its CA-issued certificate must carry (`--client-cn`). */
  client_cn?: string;
}

export interface RegistryData {
  version: 1;
  sensors: Sensor[];
}

/** What `sensor set` may change; absent fields stay as they are (timezone null: back to the default). */
export interface SensorChanges {
  description?: string;
  timezone?: string | null;
  /** A new syslog identity replacing the old one; null: the sensor no longer sends syslog. */
  syslog?: SensorSyslog | null;
  /** A duration or `off`; null: back to `sensors.expectEvery`. */
  expect_every?: string | null;
}

export interface NewSensor {
  name: string;
  description?: string;
  timezone?: string | null;
  syslog?: SensorSyslog;
  expect_every?: string;
}

/** Read, watch and change sensors. Files are the embedded default; another backend implements the same. */
export interface SensorRegistry {
  /** The valid sensors (entries that are not are left out: see rejectedEntries()). */
  list(): Promise<Sensor[]>;
  /** The entries that are not valid sensors, skipped by every reader, and why (for `check`). */
  rejectedEntries(): Promise<RejectedEntry[]>;
  /** Adds a sensor with a fresh key; returns the sensor and the key (shown once, never stored). */
  add(sensor: NewSensor): Promise<{ sensor: Sensor; key: string }>;
  revoke(name: string): Promise<Sensor>;
  /**
   * Issues a new key; every key still valid expires `graceMs` from now (0: refused at once). Keys that
   * expired long ago are dropped. Returns the sensor, the new key (shown once) and when the old keys end.
   */
  rotate(name: string, graceMs: number): Promise<{ sensor: Sensor; key: string; oldKeysExpireAt: string }>;
  /** Changes description and/or time zone (active or revoked sensors); SENSOR_NOT_FOUND when absent. */
  set(name: string, changes: SensorChanges): Promise<Sensor>;
  /**
   * Removes the sensor from the registry (its stored records stay); the name can then be issued again.
   * Returns the sensor as it was; SENSOR_NOT_FOUND when absent.
   */
  delete(name: string): Promise<Sensor>;
  /**
   * Stores a sensor exactly as given (hashes, status, keys and their expiry, dates), for `store migrate`:
   * created when the name is free, left alone when the same sensor is there, and when a different one is
   * there, replaced only with `overwrite` (else reported as a conflict and left as it is).
   */
  importSensor(sensor: Sensor, options: { overwrite: boolean }): Promise<SensorImport>;
  /**
   * list()'s sensors, and from the same read the names removed (`sensor delete`) and not issued since, each with
   * when it was removed (epoch ms), where the store keeps a mark of each removal (NATS: the marker a deleted key
   * keeps in the bucket). Absent where it keeps none (files). `store migrate` run again leaves these removed
   * unless the source's sensor is newer.
   */
  listWithRemovals?(): Promise<{ sensors: Sensor[]; removals: Map<string, number> }>;
  /** Calls `onChange` with the whole registry now and whenever it changes. */
  watch(onChange: (sensors: Sensor[]) => void, onError: (error: Error) => void): RegistryWatch;
}

/** A registry entry that is not a valid sensor: where it is (its name, key or position) and why. */
export interface RejectedEntry {
  entry: string;
  reason: string;
}

/** What `importSensor` did. */
export type SensorImport = 'created' | 'unchanged' | 'conflict' | 'overwritten';

export interface RegistryWatch {
  /** Re-reads the registry now, changed or not (SIGHUP). */
  reload(): void;
  stop(): void;
}

export const SENSOR_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * What a registry entry or a stored record may carry as a sensor name: wider than what `sensor add` issues
 * (a hand-edited registry may hold `sensor-é`, and its records are still read), but 1-64 characters and none
 * of them a control, format (bidi) or line separator, so a name can never act on a terminal or be empty.
 */
export const READABLE_SENSOR_NAME = /^[^\p{C}\p{Zl}\p{Zp}]{1,64}$/u;

/**
 * SENSOR_EXISTS for `sensor add`, saying the existing sensor's status and the command that helps (every
 * backend throws this one, so the operator reads the same advice whatever the store).
 */
export function sensorExistsError(existing: Sensor): ThreatcolError {
  const name = existing.name;
  return new ThreatcolError(
    'SENSOR_EXISTS',
    existing.status === 'revoked'
      ? `a sensor named "${name}" already exists and is revoked (since ${existing.revoked_at}); to issue the name again, remove it first: threatcol sensor delete ${name} --yes (its stored records stay)`
      : `a sensor named "${name}" already exists and is active; change its time zone or description with: threatcol sensor set ${name} --timezone IANA --description TEXT, or issue a new key with: threatcol sensor rotate ${name}`,
  );
}
