// The file-backed sensor registry: <dataDir>/sensors.json via lowdb, changed only under an inter-process lock.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { Low } from 'lowdb';
import type { Logger } from 'pino';
import { REGISTRY_FILE } from '../../data-dir/data-layout.js';
import type { Owner } from '../../data-dir/file-owner.js';
import { isPermissionError, permissionDenied, ThreatcolError } from '../../errors.js';
import { generateKey, hashKey } from '../../keys.js';
import { watchFiles } from '../../watch-files.js';
import {
  type NewSensor,
  type RegistryData,
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
import { RegistryFileAdapter } from './registry-file.js';
import { lockRegistry } from './registry-lock.js';

export { REGISTRY_FILE };

export interface FileRegistryOptions {
  dataDir: string;
  /** Owner new files must keep (the data directory's); null leaves ownership alone. */
  owner: Owner | null;
  now?: () => number;
  pollIntervalMs?: number;
  /** Where entries that are not valid sensors are reported (at warn, once per distinct set). */
  logger?: Logger;
}

export function createFileRegistry(options: FileRegistryOptions): SensorRegistry {
  const path = join(options.dataDir, REGISTRY_FILE);
  const now = options.now ?? Date.now;
  const report = options.logger ? createRejectedReport(options.logger, path) : () => {};
  /** Every read and write of the registry goes through the adapter of registry-file.ts (changes via lowdb). */
  const openAdapter = () => new RegistryFileAdapter(path, options.owner, report);
  /** lowdb is imported by the first change: a listing reads through the adapter, whose read never gives null. */
  let db: Low<RegistryData> | null = null;
  const openDb = async () => {
    const { Low } = await import('lowdb');
    db ??= new Low<RegistryData>(openAdapter(), { version: 1, sensors: [] });
    return db;
  };

  /** Runs `change` on a fresh read of the file while holding the lock, then writes the result. */
  async function update<T>(change: (data: RegistryData) => T): Promise<T> {
    let release: () => Promise<void>;
    try {
      // proper-lockfile retries every error, EACCES too: check first, so a permission problem fails at once.
      accessSync(options.dataDir, constants.W_OK | constants.X_OK);
    } catch (error) {
      if (isPermissionError(error)) throw permissionDenied(error, options.dataDir, 'change the registry in');
    }
    try {
      release = await lockRegistry(path);
    } catch (error) {
      // proper-lockfile creates `sensors.json.lock` in the data directory: EACCES there is not a held lock.
      if (isPermissionError(error)) throw permissionDenied(error, `${path}.lock`, 'create the lock');
      throw new ThreatcolError('REGISTRY_LOCKED', `cannot lock ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      const changing = await openDb();
      await changing.read();
      const result = change(changing.data);
      await changing.write();
      return result;
    } finally {
      await release();
    }
  }

  return {
    async list() {
      return (await openAdapter().read()).sensors;
    },

    async rejectedEntries() {
      const adapter = openAdapter();
      await adapter.read();
      return adapter.rejected;
    },

    async add(input: NewSensor) {
      checkSensorName(input.name);
      const key = generateKey();
      const at = new Date(now()).toISOString();
      const sensor = await update((data) => {
        const existing = data.sensors.find((s) => s.name === input.name);
        if (existing) throw sensorExistsError(existing);
        const created = newSensor(input, hashKey(key), at);
        data.sensors.push(created);
        return created;
      });
      return { sensor, key };
    },

    async revoke(name: string) {
      return update((data) => {
        const i = indexOf(data.sensors, name);
        const sensor = revokeSensor(data.sensors[i] as Sensor, now());
        data.sensors[i] = sensor;
        return sensor;
      });
    },

    async rotate(name: string, graceMs: number) {
      const key = generateKey();
      return update((data) => {
        const i = indexOf(data.sensors, name);
        const at = now();
        const sensor = rotateSensor(data.sensors[i] as Sensor, hashKey(key), at, graceMs);
        data.sensors[i] = sensor;
        return { sensor, key, oldKeysExpireAt: new Date(at + graceMs).toISOString() };
      });
    },

    async set(name: string, changes: SensorChanges) {
      return update((data) => {
        const sensor = data.sensors.find((s) => s.name === name);
        if (!sensor) throw new ThreatcolError('SENSOR_NOT_FOUND', `no sensor named "${name}"`);
        return applySensorChanges(sensor, changes);
      });
    },

    async delete(name: string) {
      return update((data) => {
        const index = data.sensors.findIndex((s) => s.name === name);
        const sensor = data.sensors[index];
        if (!sensor) throw new ThreatcolError('SENSOR_NOT_FOUND', `no sensor named "${name}"`);
        data.sensors.splice(index, 1);
        return sensor;
      });
    },

    async importSensor(input: Sensor, { overwrite }) {
      checkSensorName(input.name);
      const sensor = canonicalSensor(input);
      return update((data): SensorImport => {
        const i = data.sensors.findIndex((s) => s.name === sensor.name);
        const existing = data.sensors[i];
        if (!existing) {
          data.sensors.push(sensor);
          return 'created';
        }
        if (sameSensor(existing, sensor)) return 'unchanged';
        if (!overwrite) return 'conflict';
        data.sensors[i] = sensor;
        return 'overwritten';
      });
    },

    watch(onChange, onError) {
      const adapter = openAdapter();
      const watch = watchFiles({
        paths: [path],
        initial: true,
        pollIntervalMs: options.pollIntervalMs ?? 500,
        onChange() {
          // The adapter reads synchronously inside: reads resolve in the order the changes were seen. A
          // reader that throws on what it is given is reported, never an unhandled rejection that ends serve.
          adapter.read().then(
            (data) => {
              try {
                onChange(data.sensors);
              } catch (error) {
                onError(error as Error);
              }
            },
            (error: Error) => onError(error),
          );
        },
      });
      return {
        reload() {
          watch.forget();
          watch.check();
        },
        stop: () => watch.stop(),
      };
    },
  };
}

/** Where the named sensor is in the registry, or SENSOR_NOT_FOUND. */
function indexOf(sensors: Sensor[], name: string): number {
  const i = sensors.findIndex((s) => s.name === name);
  if (i === -1) throw new ThreatcolError('SENSOR_NOT_FOUND', `no sensor named "${name}"`);
  return i;
}
