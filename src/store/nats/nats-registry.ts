// The sensor registry in a KV bucket (DESIGN 10): one key per sensor, value = the Sensor JSON (hashes only).
// add is a create; changes are updates with the expected revision, re-applied on a conflict, never lost.
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { ThreatcolError } from '../../errors.js';
import { generateKey, hashKey } from '../../keys.js';
import {
  type NewSensor,
  type RegistryWatch,
  type RejectedEntry,
  type Sensor,
  type SensorChanges,
  type SensorImport,
  type SensorRegistry,
  sensorExistsError,
} from '../registry.js';
import {
  applySensorChanges,
  canonicalSensor,
  checkSensorName,
  newSensor,
  revokeSensor,
  rotateSensor,
  sameSensor,
} from '../sensor-changes.js';
import { createRejectedReport } from '../sensor-entries.js';
import { everyEntry, unavailableRead } from './bucket-read.js';
import { decodeToken, encodeToken } from './names.js';
import { sensorOf, watchRegistry } from './registry-watch.js';

export interface NatsRegistryOptions {
  /** The bucket, once NATS is reachable (rejects UNAVAILABLE otherwise). */
  bucket: () => Promise<KV>;
  /** The bucket's name (for messages). */
  name: string;
  /** How long a read waits through an election before it fails UNAVAILABLE (nats.publishTimeoutMs). */
  waitMs: number;
  /** Why NATS cannot be used now, when the connection is down (for the error's message); else null. */
  why?: () => string | null;
  now?: () => number;
  /** Safety full re-read interval of watchers, besides the live KV watch (default 15 s). */
  rereadIntervalMs?: number;
  /** Where entries that are not valid sensors are reported (at warn, once per distinct set). */
  logger?: Logger;
}

/** REGISTRY_CORRUPT for a change asked of an entry that is not a valid sensor. */
function invalidEntry(name: string, reason: string): ThreatcolError {
  return new ThreatcolError(
    'REGISTRY_CORRUPT',
    `the registry entry of "${name}" is not a valid sensor (${reason}); issue the sensor again with: threatcol sensor add ${name}`,
  );
}

/** Conflicting writers are rare (two admins at once); this many re-reads resolve any realistic race. */
const MAX_CONFLICT_RETRIES = 50;

function isConflict(error: unknown): boolean {
  const e = error as { message?: string; api_error?: { err_code?: number } };
  return e.api_error?.err_code === 10071 || /wrong last sequence/i.test(e.message ?? '');
}

export function createNatsRegistry(options: NatsRegistryOptions): SensorRegistry {
  const now = options.now ?? Date.now;
  const report = options.logger ? createRejectedReport(options.logger, 'NATS key-value bucket') : () => {};

  /**
   * Every entry of the bucket: the valid sensors, the others with why (reported), and each removed name with
   * its removal time (its marker's).
   */
  async function readAll(): Promise<{
    sensors: Sensor[];
    rejected: RejectedEntry[];
    removals: Map<string, number>;
  }> {
    const entries = await everyEntry({
      open: options.bucket,
      waitMs: options.waitMs,
      unavailable: unavailableRead(options.name, options.why),
    });
    const sensors: Sensor[] = [];
    const rejected: RejectedEntry[] = [];
    const removals = new Map<string, number>();
    for (const entry of entries) {
      if (entry.operation !== 'PUT') {
        removals.set(decodeToken(entry.key), entry.created.getTime());
        continue;
      }
      const checked = sensorOf(entry);
      if ('sensor' in checked) sensors.push(checked.sensor);
      else rejected.push({ entry: entry.key, reason: checked.reason });
    }
    report(rejected);
    sensors.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.name.localeCompare(b.name));
    return { sensors, rejected, removals };
  }

  const list = async (): Promise<Sensor[]> => (await readAll()).sensors;

  /**
   * Writes over the named sensor's current value at its revision (`write` gets the bucket, key, value and
   * revision), re-reading after a conflict: a change made meanwhile is seen, never silently dropped.
   */
  async function atRevision<T>(
    name: string,
    write: (kv: KV, key: string, sensor: Sensor, revision: number) => Promise<T>,
  ): Promise<T> {
    const kv = await options.bucket();
    const key = encodeToken(name);
    for (let i = 0; ; i++) {
      const entry = await kv.get(key);
      if (entry?.operation !== 'PUT') {
        throw new ThreatcolError('SENSOR_NOT_FOUND', `no sensor named "${name}"`);
      }
      const checked = sensorOf(entry);
      if (!('sensor' in checked)) throw invalidEntry(name, checked.reason);
      try {
        return await write(kv, key, checked.sensor, entry.revision);
      } catch (error) {
        if (!isConflict(error) || i >= MAX_CONFLICT_RETRIES) throw error;
      }
    }
  }

  /** Applies `change` to the current value with the expected revision. */
  function update(name: string, change: (sensor: Sensor) => Sensor): Promise<Sensor> {
    return atRevision(name, async (kv, key, sensor, revision) => {
      const next = change(sensor);
      await kv.update(key, JSON.stringify(next), revision);
      return next;
    });
  }

  return {
    list,

    rejectedEntries: async () => (await readAll()).rejected,

    async listWithRemovals() {
      const { sensors, removals } = await readAll();
      return { sensors, removals };
    },

    async add(input: NewSensor) {
      checkSensorName(input.name);
      const apiKey = generateKey();
      const sensor = newSensor(input, hashKey(apiKey), new Date(now()).toISOString());
      const kv = await options.bucket();
      const key = encodeToken(input.name);
      try {
        await kv.create(key, JSON.stringify(sensor));
      } catch (error) {
        if (!isConflict(error)) throw error;
        const existing = await kv.get(key);
        if (existing?.operation !== 'PUT') {
          throw new ThreatcolError('SENSOR_EXISTS', `a sensor named "${input.name}" already exists`);
        }
        const checked = sensorOf(existing);
        if ('sensor' in checked) throw sensorExistsError(checked.sensor);
        // An entry that is no sensor holds the name: issuing it again replaces it (as the files registry does).
        await kv.update(key, JSON.stringify(sensor), existing.revision);
      }
      return { sensor, key: apiKey };
    },

    revoke: (name: string) => update(name, (sensor) => revokeSensor(sensor, now())),

    async rotate(name: string, graceMs: number) {
      const key = generateKey();
      const keyHash = hashKey(key);
      let until = '';
      const sensor = await update(name, (current) => {
        const at = now();
        until = new Date(at + graceMs).toISOString();
        return rotateSensor(current, keyHash, at, graceMs);
      });
      return { sensor, key, oldKeysExpireAt: until };
    },

    set: (name: string, changes: SensorChanges) =>
      update(name, (sensor) => applySensorChanges({ ...sensor }, changes)),

    delete: (name: string) =>
      atRevision(name, async (kv, key, sensor, revision) => {
        await kv.delete(key, { previousSeq: revision });
        return sensor;
      }),

    async importSensor(input: Sensor, { overwrite }): Promise<SensorImport> {
      checkSensorName(input.name);
      const sensor = canonicalSensor(input);
      const kv = await options.bucket();
      const key = encodeToken(sensor.name);
      const value = JSON.stringify(sensor);
      for (let i = 0; ; i++) {
        const entry = await kv.get(key);
        try {
          if (entry?.operation !== 'PUT') {
            // Free, or deleted (a delete marker has a revision to update from): a concurrent create conflicts.
            if (entry) await kv.update(key, value, entry.revision);
            else await kv.create(key, value);
            return 'created';
          }
          const checked = sensorOf(entry);
          // An entry that is not a valid sensor is another value: a conflict, replaced with --overwrite.
          if ('sensor' in checked && sameSensor(checked.sensor, sensor)) return 'unchanged';
          if (!overwrite) return 'conflict';
          await kv.update(key, value, entry.revision);
          return 'overwritten';
        } catch (error) {
          if (!isConflict(error) || i >= MAX_CONFLICT_RETRIES) throw error;
        }
      }
    },

    watch(onChange, onError): RegistryWatch {
      return watchRegistry(options, readAll, report, onChange, onError);
    },
  };
}
