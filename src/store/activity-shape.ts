// What a per-sensor activity entry read back from a store may hold: one check for both backends (the files
// stats file, the NATS stats bucket, which anyone with write access to it can fill), so one bad entry
// counts as "no activity" instead of failing `sensor list` or the daemon's stats writes.
import type { SensorActivity, SensorSilence } from './store.js';

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);

/** The entry with every field of the right type (others reset), or null when it is not an object at all. */
export function toSensorActivity(value: unknown): SensorActivity | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const a = value as Record<string, unknown>;
  return {
    last_seen: text(a.last_seen),
    last_accepted: text(a.last_accepted),
    last_address: text(a.last_address),
    records_received: count(a.records_received),
    requests_rejected: count(a.requests_rejected),
    last_rejection_code: text(a.last_rejection_code),
    last_rejected_at: text(a.last_rejected_at),
  };
}

/** An entry's JSON text as activity, or null (not JSON, not an object). */
export function parseSensorActivity(json: string): SensorActivity | null {
  try {
    return toSensorActivity(JSON.parse(json));
  } catch {
    return null;
  }
}

/** A stored silence (either backend), or null when it does not carry a time in silent_since. */
export function toSensorSilence(value: unknown): SensorSilence | null {
  if (typeof value !== 'object' || value === null) return null;
  const since = (value as Record<string, unknown>).silent_since;
  return typeof since === 'string' && !Number.isNaN(Date.parse(since)) ? { silent_since: since } : null;
}
