// The sensor registry in a KV bucket (DESIGN 10): one key per sensor, value = the Sensor JSON (hashes only).
// add is a create; changes are updates with the expected revision, re-applied on a conflict, never lost.
import type { KV } from '@nats-io/kv';
import { ThreatcolError } from '../../errors.js';
import { generateKey, hashKey } from '../../keys.js';
import {
  type NewSensor,
  type RegistryWatch,
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
import { decodeToken, encodeToken } from './names.js';

export interface NatsRegistryOptions {
  /** The bucket, once NATS is reachable (rejects UNAVAILABLE otherwise). */
  bucket: () => Promise<KV>;
  now?: () => number;
  /** Safety full re-read interval of watchers, besides the live KV watch (default 15 s). */
  rereadIntervalMs?: number;
}

/** Conflicting writers are rare (two admins at once); this many re-reads resolve any realistic race. */
const MAX_CONFLICT_RETRIES = 50;

function isConflict(error: unknown): boolean {
  const e = error as { message?: string; api_error?: { err_code?: number } };
  return e.api_error?.err_code === 10071 || /wrong last sequence/i.test(e.message ?? '');
}

export function createNatsRegistry(options: NatsRegistryOptions): SensorRegistry {
  const now = options.now ?? Date.now;

  async function list(): Promise<Sensor[]> {
    const kv = await options.bucket();
    const names: string[] = [];
    for await (const key of await kv.keys()) names.push(key);
    const sensors: Sensor[] = [];
    for (const key of names) {
      const entry = await kv.get(key);
      if (entry && entry.operation === 'PUT') sensors.push(entry.json<Sensor>());
    }
    return sensors.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.name.localeCompare(b.name));
  }

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
      try {
        return await write(kv, key, entry.json<Sensor>(), entry.revision);
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

    async add(input: NewSensor) {
      checkSensorName(input.name);
      const key = generateKey();
      const sensor = newSensor(input, hashKey(key), new Date(now()).toISOString());
      const kv = await options.bucket();
      try {
        await kv.create(encodeToken(input.name), JSON.stringify(sensor));
      } catch (error) {
        if (!isConflict(error)) throw error;
        const existing = await kv.get(encodeToken(input.name));
        if (existing?.operation === 'PUT') throw sensorExistsError(existing.json<Sensor>());
        throw new ThreatcolError('SENSOR_EXISTS', `a sensor named "${input.name}" already exists`);
      }
      return { sensor, key };
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
      update(name, (sensor) => {
        const next: Sensor = {
          ...sensor,
          ...(changes.description !== undefined ? { description: changes.description } : {}),
          ...(changes.timezone !== undefined ? { timezone: changes.timezone } : {}),
        };
        if (changes.syslog === null) delete next.syslog;
        else if (changes.syslog !== undefined) next.syslog = changes.syslog;
        return next;
      }),

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
          if (sameSensor(entry.json<Sensor>(), sensor)) return 'unchanged';
          if (!overwrite) return 'conflict';
          await kv.update(key, value, entry.revision);
          return 'overwritten';
        } catch (error) {
          if (!isConflict(error) || i >= MAX_CONFLICT_RETRIES) throw error;
        }
      }
    },

    watch(onChange, onError): RegistryWatch {
      return watchRegistry(options, list, onChange, onError);
    },
  };
}

/**
 * Keeps `onChange` current: a full read, then the KV watcher's live changes (well under a second), and a
 * full re-read now and then and after any watcher failure (a NATS node restart, an outage).
 */
function watchRegistry(
  options: NatsRegistryOptions,
  list: () => Promise<Sensor[]>,
  onChange: (sensors: Sensor[]) => void,
  onError: (error: Error) => void,
): RegistryWatch {
  let stopped = false;
  let sensors = new Map<string, Sensor>();
  let stopWatcher: (() => void) | null = null;
  let signature = '';
  let scheduled = false;

  /** Coalesces a burst of watcher entries (the initial replay) into one onChange. */
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      emit();
    });
  }

  function emit(): void {
    const all = [...sensors.values()];
    const next = JSON.stringify(all);
    if (next === signature) return;
    signature = next;
    onChange(all);
  }

  async function reread(): Promise<void> {
    const all = await list();
    sensors = new Map(all.map((s) => [s.name, s]));
    emit();
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        const kv = await options.bucket();
        await reread();
        const watcher = await kv.watch({ key: '>' });
        stopWatcher = () => watcher.stop();
        if (stopped) watcher.stop();
        for await (const entry of watcher) {
          const name = decodeToken(entry.key);
          if (entry.operation === 'PUT') sensors.set(name, entry.json<Sensor>());
          else sensors.delete(name);
          schedule();
        }
      } catch (error) {
        if (!stopped) onError(error as Error);
      }
      stopWatcher = null;
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  void run();

  const timer = setInterval(() => void reread().catch(() => {}), options.rereadIntervalMs ?? 15_000);
  timer.unref();

  return {
    reload() {
      void reread().catch(onError);
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      stopWatcher?.();
    },
  };
}
