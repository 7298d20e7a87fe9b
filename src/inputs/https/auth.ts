// Authenticates a request by its two headers against the registry held in memory (DESIGN 2, steps 2-3).
import type { IncomingHttpHeaders } from 'node:http';
import { ThreatcolError } from '../../errors.js';
import { digestFromHash, digestsEqual, keyDigest, MAX_KEY_LENGTH } from '../../keys.js';
import { isAsciiText } from '../../records/stored-line.js';
import type { Sensor } from '../../store/registry.js';

export interface AuthenticatedSensor {
  name: string;
  /** The name is ASCII (names `sensor add` makes always are; a hand-edited registry may hold others). */
  asciiName: boolean;
  timezone: string | null;
  revoked: boolean;
  keys: { digest: string; expiresAt: number }[];
}

/** Compared against when the sensor is unknown, so unknown names cost the same as wrong keys. */
const DUMMY_KEYS = [{ digest: keyDigest('threatcol-dummy-key'), expiresAt: Number.POSITIVE_INFINITY }];

const KEY_HEADERS = ['x-auth_key', 'x-auth-key'] as const;
const NAME_HEADERS = ['x-sensor_name', 'x-sensor-name'] as const;

/**
 * What a connection proved: the headers it sent and the registry entry they matched. A keep-alive connection's
 * next request with the same headers is that sensor without hashing the key again, as long as the entry is
 * the same object (every registry change to the sensor, a revoke or a key rotated, makes a new one) and the
 * matched key has not expired. The headers are compared as plain strings: the connection sent them itself.
 */
interface Proven {
  key: string;
  name: string;
  sensor: AuthenticatedSensor;
  expiresAt: number;
}

/** Until the registry has been read once, no key can be judged: the sender is told to retry, not that it is wrong. */
const NOT_LOADED = { headers: { 'Retry-After': '1' } };

export class Authenticator {
  private sensors = new Map<string, AuthenticatedSensor>();
  private read = false;
  /** By connection (its socket), so a closed connection's entry goes with it. */
  private readonly proven = new WeakMap<object, Proven>();

  /** Whether the registry has been read at least once (until then every key is answered 503). */
  get loaded(): boolean {
    return this.read;
  }

  /** Replaces the in-memory registry (called on every registry change). */
  update(sensors: Sensor[]): void {
    this.read = true;
    const next = new Map<string, AuthenticatedSensor>();
    for (const s of sensors) {
      const keys: AuthenticatedSensor['keys'] = [];
      for (const k of s.keys) {
        const digest = digestFromHash(k.hash);
        if (!digest) continue;
        const expiresAt = k.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(k.expires_at);
        keys.push({ digest, expiresAt });
      }
      const entry: AuthenticatedSensor = {
        name: s.name,
        asciiName: isAsciiText(s.name),
        timezone: s.timezone,
        revoked: s.status === 'revoked',
        keys,
      };
      // An unchanged sensor keeps its object: `stillAdmitted` then costs its in-flight requests one compare.
      const previous = this.sensors.get(s.name);
      next.set(s.name, previous !== undefined && sameEntry(previous, entry) ? previous : entry);
    }
    this.sensors = next;
  }

  /**
   * Checked again once a request's body is read, before anything is stored: a sensor revoked (or its key
   * retired) while the body arrived is refused as a new request would be (issue 27 F9). The same object as
   * `authenticate` returned means nothing changed; else the headers are judged again against the registry now.
   */
  stillAdmitted(who: AuthenticatedSensor, headers: IncomingHttpHeaders, now: number): AuthenticatedSensor {
    if (this.sensors.get(who.name) === who) return who;
    return this.authenticate(headers, now);
  }

  /**
   * The name a refused request claims, when it is a registered sensor: its rejection is counted against that
   * sensor, so a firewall with a wrong or old key shows in the sensor table (names are bounded by the registry).
   */
  registeredName(headers: IncomingHttpHeaders): string | null {
    const name = pickHeader(headers, NAME_HEADERS);
    return typeof name === 'string' && this.sensors.has(name) ? name : null;
  }

  /**
   * The sensor a request comes from, or throws AUTH_MISSING / AUTH_INVALID / SENSOR_REVOKED. `connection`:
   * the request's socket, whose earlier proof of the same key spares the hash (see Proven).
   */
  authenticate(headers: IncomingHttpHeaders, now: number, connection?: object): AuthenticatedSensor {
    const key = pickHeader(headers, KEY_HEADERS);
    const name = pickHeader(headers, NAME_HEADERS);
    const proof = connection === undefined ? undefined : this.proven.get(connection);
    if (
      proof !== undefined &&
      proof.key === key &&
      proof.name === name &&
      proof.expiresAt > now &&
      this.sensors.get(proof.name) === proof.sensor
    ) {
      return proof.sensor;
    }
    if (key === undefined || name === undefined) {
      const missing = [key === undefined ? 'X-AUTH_KEY' : null, name === undefined ? 'X-SENSOR_NAME' : null]
        .filter(Boolean)
        .join(' and ');
      throw new ThreatcolError('AUTH_MISSING', `missing header ${missing}`, {
        details: [{ path: missing, message: 'header is required' }],
      });
    }
    // NATS down since the start (or an unreadable registry file): a 401 would tell a firewall its key is wrong.
    if (!this.read) {
      throw new ThreatcolError(
        'UNAVAILABLE',
        'the sensor registry is not loaded yet; retry shortly',
        NOT_LOADED,
      );
    }
    const sensor = name === null ? undefined : this.sensors.get(name);
    const presented = key !== null && key.length <= MAX_KEY_LENGTH ? keyDigest(key) : keyDigest('');
    let expiresAt = 0;
    // Every candidate is compared, in constant time, whether or not an earlier one matched.
    for (const candidate of sensor?.keys ?? DUMMY_KEYS) {
      const equal = digestsEqual(presented, candidate.digest);
      if (equal && candidate.expiresAt > now) expiresAt = Math.max(expiresAt, candidate.expiresAt);
    }
    if (!sensor || expiresAt === 0 || key === null || name === null) throw new ThreatcolError('AUTH_INVALID');
    if (sensor.revoked) throw new ThreatcolError('SENSOR_REVOKED');
    if (connection !== undefined) this.proven.set(connection, { key, name, sensor, expiresAt });
    return sensor;
  }
}

function sameEntry(a: AuthenticatedSensor, b: AuthenticatedSensor): boolean {
  return (
    a.revoked === b.revoked &&
    a.timezone === b.timezone &&
    a.keys.length === b.keys.length &&
    a.keys.every((k, i) => k.digest === b.keys[i]?.digest && k.expiresAt === b.keys[i]?.expiresAt)
  );
}

/**
 * The value of the first of two header spellings that is present (underscore form first: proxies drop
 * it by default, so the hyphen form is accepted too). undefined: absent or empty. null: the two forms
 * disagree, or the header was repeated with different values, so the request cannot be trusted.
 */
function pickHeader(
  headers: IncomingHttpHeaders,
  names: readonly [string, string],
): string | null | undefined {
  const a = headers[names[0]];
  const b = headers[names[1]];
  const first = typeof a === 'string' && a !== '' ? a : undefined;
  const second = typeof b === 'string' && b !== '' ? b : undefined;
  if (first !== undefined && second !== undefined && first !== second) return null;
  return first ?? second;
}
