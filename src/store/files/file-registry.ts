// The file-backed sensor registry: <dataDir>/sensors.json via lowdb, changed only under an inter-process lock.
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Low } from 'lowdb';
import lockfile from 'proper-lockfile';
import { REGISTRY_FILE } from '../../data-dir/data-layout.js';
import { type Owner, writeFileAtomic } from '../../data-dir/file-owner.js';
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
  canonicalSensor,
  checkSensorName,
  newSensor,
  revokeSensor,
  rotateSensor,
  sameSensor,
} from '../sensor-changes.js';

export { REGISTRY_FILE };

const REGISTRY_MODE = 0o600;

export interface FileRegistryOptions {
  dataDir: string;
  /** Owner new files must keep (the data directory's); null leaves ownership alone. */
  owner: Owner | null;
  now?: () => number;
  pollIntervalMs?: number;
}

/**
 * A lowdb adapter that reads strictly and writes atomically, durably, with mode 0600 and the right owner. An
 * absent file reads as an empty registry, never as null: lowdb keeps its previous data on null, which in the
 * long-lived daemon would keep serving sensors of a registry that was removed.
 */
class RegistryFileAdapter {
  constructor(
    private readonly path: string,
    private readonly owner: Owner | null,
  ) {}

  async read(): Promise<RegistryData> {
    return readRegistryFile(this.path) ?? { version: 1, sensors: [] };
  }

  async write(data: RegistryData): Promise<void> {
    writeFileAtomic(this.path, `${JSON.stringify(data, null, 2)}\n`, REGISTRY_MODE, this.owner);
  }
}

function readRegistryFile(path: string): RegistryData | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (isPermissionError(error)) throw permissionDenied(error, path, 'read');
    throw new ThreatcolError('REGISTRY_CORRUPT', `cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const data = JSON.parse(text) as RegistryData;
    if (data?.version !== 1 || !Array.isArray(data.sensors)) throw new Error('unexpected shape');
    return data;
  } catch (error) {
    throw new ThreatcolError(
      'REGISTRY_CORRUPT',
      `${path} is not a valid sensor registry: ${(error as Error).message}`,
    );
  }
}

export function createFileRegistry(options: FileRegistryOptions): SensorRegistry {
  const path = join(options.dataDir, REGISTRY_FILE);
  const now = options.now ?? Date.now;
  /** Every read and write of the registry goes through lowdb with the adapter above. */
  const open = () =>
    new Low<RegistryData>(new RegistryFileAdapter(path, options.owner), { version: 1, sensors: [] });
  const db = open();

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
      release = await lockfile.lock(path, {
        realpath: false,
        stale: 10_000,
        retries: { retries: 100, minTimeout: 10, maxTimeout: 200, randomize: true },
      });
    } catch (error) {
      // proper-lockfile creates `sensors.json.lock` in the data directory: EACCES there is not a held lock.
      if (isPermissionError(error)) throw permissionDenied(error, `${path}.lock`, 'create the lock');
      throw new ThreatcolError('REGISTRY_LOCKED', `cannot lock ${path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      await db.read();
      const result = change(db.data);
      await db.write();
      return result;
    } finally {
      await release();
    }
  }

  return {
    async list() {
      const reader = open();
      await reader.read();
      return reader.data.sensors;
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
        if (changes.description !== undefined) sensor.description = changes.description;
        if (changes.timezone !== undefined) sensor.timezone = changes.timezone;
        if (changes.syslog === null) delete sensor.syslog;
        else if (changes.syslog !== undefined) sensor.syslog = changes.syslog;
        return sensor;
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
      const reader = open();
      const watch = watchFiles({
        paths: [path],
        initial: true,
        pollIntervalMs: options.pollIntervalMs ?? 500,
        onChange() {
          // The adapter reads synchronously inside: reads resolve in the order the changes were seen.
          reader.read().then(
            () => onChange(reader.data.sensors),
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
