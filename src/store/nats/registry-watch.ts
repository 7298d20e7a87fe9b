// The NATS registry's view of its bucket: what a value is (a sensor, or why not) and the watch that keeps a
// collector's sensors current from the KV watcher, with full re-reads after a failure and now and then.
import type { KV, KvEntry } from '@nats-io/kv';
import type { RegistryWatch, RejectedEntry, Sensor } from '../registry.js';
import { parseEntry, sensorProblem } from '../sensor-entries.js';
import { decodeToken } from './names.js';

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
 * full re-read now and then and after any watcher failure (a NATS node restart, an outage).
 */
export function watchRegistry(
  options: { bucket: () => Promise<KV>; rereadIntervalMs?: number },
  readAll: () => Promise<{ sensors: Sensor[]; rejected: RejectedEntry[] }>,
  report: (rejected: RejectedEntry[]) => void,
  onChange: (sensors: Sensor[]) => void,
  onError: (error: Error) => void,
): RegistryWatch {
  let stopped = false;
  let sensors = new Map<string, Sensor>();
  /** Keys whose value is not a valid sensor, and why: left out of `sensors`, reported. */
  let rejected = new Map<string, string>();
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
    report([...rejected].map(([entry, reason]) => ({ entry, reason })));
    const all = [...sensors.values()];
    const next = JSON.stringify(all);
    if (next === signature) return;
    signature = next;
    // Called from a timer: a reader that throws on what it is given is reported, never ends the process.
    try {
      onChange(all);
    } catch (error) {
      onError(error as Error);
    }
  }

  async function reread(): Promise<void> {
    const all = await readAll();
    sensors = new Map(all.sensors.map((s) => [s.name, s]));
    rejected = new Map(all.rejected.map((r) => [r.entry, r.reason]));
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
          const checked = entry.operation === 'PUT' ? sensorOf(entry) : null;
          rejected.delete(entry.key);
          if (checked && 'sensor' in checked) sensors.set(name, checked.sensor);
          else {
            // A bad value replaces a good one: that sensor stops being accepted, and the entry is reported.
            sensors.delete(name);
            if (checked) rejected.set(entry.key, checked.reason);
          }
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
