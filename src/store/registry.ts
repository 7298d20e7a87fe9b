// The sensor registry interface and its shape: who may send, with which key hashes, in which time zone.

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
}

export interface RegistryData {
  version: 1;
  sensors: Sensor[];
}

export interface NewSensor {
  name: string;
  description?: string;
  timezone?: string | null;
}

/** Read, watch and change sensors. Files are the embedded default; another backend implements the same. */
export interface SensorRegistry {
  list(): Promise<Sensor[]>;
  /** Adds a sensor with a fresh key; returns the sensor and the key (shown once, never stored). */
  add(sensor: NewSensor): Promise<{ sensor: Sensor; key: string }>;
  revoke(name: string): Promise<Sensor>;
  /**
   * Issues a new key; every key still valid expires `graceMs` from now (0: refused at once). Keys that
   * expired long ago are dropped. Returns the sensor, the new key (shown once) and when the old keys end.
   */
  rotate(name: string, graceMs: number): Promise<{ sensor: Sensor; key: string; oldKeysExpireAt: string }>;
  /** Calls `onChange` with the whole registry now and whenever it changes. */
  watch(onChange: (sensors: Sensor[]) => void, onError: (error: Error) => void): RegistryWatch;
}

export interface RegistryWatch {
  /** Re-reads the registry now, changed or not (SIGHUP). */
  reload(): void;
  stop(): void;
}

export const SENSOR_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
