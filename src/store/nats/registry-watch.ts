// The NATS registry's view of its bucket: what a value is (a sensor, or why not) and the watch that keeps a
// collector's sensors current from the KV watcher, with full re-reads after a failure and now and then.
import type { KV, KvEntry } from '@nats-io/kv';
import type { RegistryWatch, RejectedEntry, Sensor } from '../registry.js';
import { parseEntry, sensorProblem } from '../sensor-entries.js';
import { decodeToken } from './names.js';
import { watchBucket } from './watch-bucket.js';

/** A bucket value as a sensor, or why it is not one (anyone with write access to the bucket can put anything). */
export function sensorOf(entry: KvEntry): { sensor: Sensor } | { reason: string } {
  const value = parseEntry(entry.string());
  const reason = sensorProblem(value);
  if (reason !== null) return { reason };
  const sensor = value as Sensor;
  // One key must not speak for another sensor (the watch and auth know a sensor by its key).
  if (sensor.name !== decodeToken(entry.key)) return { reason: 'its name differs from its key' };
  return { sensor };
}

/**
 * Keeps `onChange` current: a full read, then the KV watcher's live changes (well under a second), and a
 * full re-read now and then and after any watcher failure (a NATS node restart, an outage): watch-bucket.ts.
 */
export function watchRegistry(
  options: { bucket: () => Promise<KV>; rereadIntervalMs?: number },
  readAll: () => Promise<{ sensors: Sensor[]; rejected: RejectedEntry[] }>,
  report: (rejected: RejectedEntry[]) => void,
  onChange: (sensors: Sensor[]) => void,
  onError: (error: Error) => void,
): RegistryWatch {
  let sensors = new Map<string, Sensor>();
  /** Keys whose value is not a valid sensor, and why: left out of `sensors`, reported. */
  let rejected = new Map<string, string>();
  let signature = '';

  return watchBucket({
    bucket: options.bucket,
    async reread() {
      const all = await readAll();
      sensors = new Map(all.sensors.map((s) => [s.name, s]));
      rejected = new Map(all.rejected.map((r) => [r.entry, r.reason]));
    },
    take(entry) {
      const name = decodeToken(entry.key);
      const checked = entry.operation === 'PUT' ? sensorOf(entry) : null;
      rejected.delete(entry.key);
      if (checked && 'sensor' in checked) sensors.set(name, checked.sensor);
      else {
        // A bad value replaces a good one: that sensor stops being accepted, and the entry is reported.
        sensors.delete(name);
        if (checked) rejected.set(entry.key, checked.reason);
      }
    },
    changed() {
      report([...rejected].map(([entry, reason]) => ({ entry, reason })));
      const all = [...sensors.values()];
      const next = JSON.stringify(all);
      if (next === signature) return;
      signature = next;
      onChange(all);
    },
    onError,
    rereadIntervalMs: options.rereadIntervalMs ?? 15_000,
  });
}
