// Per-sensor stats in a KV bucket (DESIGN 10): each collector writes only its own key per sensor
// (`<sensor>.<collector id>`), so writers never conflict; readers sum over collectors.
import type { KV, KvEntry } from '@nats-io/kv';
import { parseSensorActivity, toSensorSilence } from '../activity-shape.js';
import type { SensorActivity, SensorSilence, SensorStatsStore } from '../store.js';
import { everyEntry, unavailableRead } from './bucket-read.js';
import { parseSilenceKey, parseStatsKey, silenceKey, statsKey } from './names.js';

export interface NatsStatsOptions {
  bucket: () => Promise<KV>;
  /** The bucket's name (for messages). */
  name: string;
  /** How long a read waits through an election before it fails UNAVAILABLE (nats.publishTimeoutMs). */
  waitMs: number;
  /** Why NATS cannot be used now, when the connection is down (for the error's message); else null. */
  why?: () => string | null;
  /** This collector's id, asked only when there are counts to write (null: a reader only). */
  collectorId: () => string | null;
}

const empty = (): SensorActivity => ({
  last_seen: null,
  last_accepted: null,
  last_address: null,
  records_received: 0,
  requests_rejected: 0,
  last_rejection_code: null,
  last_rejected_at: null,
});

/** How long stopping waits for the last counts to reach NATS. */
const STOP_FLUSH_MS = 3000;

const later = (a: string | null | undefined, b: string | null | undefined) =>
  (a ?? '') >= (b ?? '') ? (a ?? null) : (b ?? null);

export function createNatsStats(options: NatsStatsOptions): SensorStatsStore {
  /** Counts not yet written, per sensor. */
  const pending = new Map<string, SensorActivity>();
  /** What this collector last wrote per sensor (read back once, so a restart continues its counts). */
  const written = new Map<string, SensorActivity>();
  let timer: NodeJS.Timeout | null = null;
  /** The flush under way, if any: the next tick skips rather than queue behind it (an outage would pile them up). */
  let flushing: Promise<void> | null = null;
  /** The bucket's replay under way: the counts and the silences asked together (a sensor list, the dashboard) share it. */
  let replaying: Promise<KvEntry[]> | null = null;
  const entries = (): Promise<KvEntry[]> => {
    replaying ??= everyEntry({
      open: options.bucket,
      waitMs: options.waitMs,
      unavailable: unavailableRead(options.name, options.why),
    }).finally(() => {
      replaying = null;
    });
    return replaying;
  };

  function entry(sensor: string): SensorActivity {
    let e = pending.get(sensor);
    if (!e) {
      e = empty();
      pending.set(sensor, e);
    }
    return e;
  }

  async function writeOne(kv: KV, id: string, sensor: string, delta: SensorActivity): Promise<void> {
    const key = statsKey(sensor, id);
    let base = written.get(sensor);
    if (!base) {
      const stored = await kv.get(key);
      base = (stored?.operation === 'PUT' ? parseSensorActivity(stored.string()) : null) ?? empty();
    }
    const next: SensorActivity = {
      last_seen: later(base.last_seen, delta.last_seen),
      last_accepted: later(base.last_accepted, delta.last_accepted),
      last_address: delta.last_address ?? base.last_address,
      records_received: base.records_received + delta.records_received,
      requests_rejected: base.requests_rejected + delta.requests_rejected,
      last_rejection_code: delta.last_rejection_code ?? base.last_rejection_code ?? null,
      last_rejected_at: later(base.last_rejected_at, delta.last_rejected_at),
    };
    await kv.put(key, JSON.stringify(next));
    written.set(sensor, next);
  }

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const id = options.collectorId();
    if (id === null) return;
    const kv = await options.bucket();
    const batch = [...pending];
    pending.clear();
    for (let i = 0; i < batch.length; i++) {
      const [sensor, delta] = batch[i] as [string, SensorActivity];
      try {
        await writeOne(kv, id, sensor, delta);
      } catch (error) {
        // Not written: merge this and the rest back so the counts are written next time.
        for (const [s, d] of batch.slice(i)) merge(entry(s), d);
        throw error;
      }
    }
  }

  return {
    recordAccepted(sensor, address, records, at) {
      const e = entry(sensor);
      e.last_seen = later(e.last_seen, at);
      e.last_accepted = later(e.last_accepted, at);
      e.last_address = address;
      e.records_received += records;
    },
    recordRejected(sensor, address, code, at) {
      const e = entry(sensor);
      if (address !== null) {
        e.last_seen = later(e.last_seen, at);
        e.last_address = address;
      }
      e.requests_rejected += 1;
      e.last_rejection_code = code;
      e.last_rejected_at = at;
    },
    async read() {
      const sums: Record<string, SensorActivity> = Object.create(null);
      const newest: Record<string, string> = Object.create(null);
      for (const stored of await entries()) {
        const parsed = parseStatsKey(stored.key);
        if (!parsed || stored.operation !== 'PUT') continue;
        const one = parseSensorActivity(stored.string());
        if (one === null) continue;
        const sum = sums[parsed.sensor] ?? empty();
        sum.records_received += one.records_received;
        sum.requests_rejected += one.requests_rejected;
        // The most recent sighting across collectors gives both last_seen and last_address.
        if ((one.last_seen ?? '') > (newest[parsed.sensor] ?? '')) {
          newest[parsed.sensor] = one.last_seen ?? '';
          sum.last_seen = one.last_seen;
          sum.last_address = one.last_address;
        }
        sum.last_accepted = later(sum.last_accepted, one.last_accepted);
        if ((one.last_rejected_at ?? '') > (sum.last_rejected_at ?? '')) {
          sum.last_rejected_at = one.last_rejected_at ?? null;
          sum.last_rejection_code = one.last_rejection_code ?? null;
        }
        sums[parsed.sensor] = sum;
      }
      return sums;
    },
    async readSilences() {
      const silences: Record<string, SensorSilence> = Object.create(null);
      for (const stored of await entries()) {
        const sensor = parseSilenceKey(stored.key);
        if (sensor === null || stored.operation !== 'PUT') continue;
        let value: unknown = null;
        try {
          value = JSON.parse(stored.string());
        } catch {
          // Not JSON: not a silence.
        }
        const silence = toSensorSilence(value);
        if (silence) silences[sensor] = silence;
      }
      return silences;
    },
    async writeSilence(sensor, silence) {
      const kv = await options.bucket();
      if (silence === null) await kv.delete(silenceKey(sensor));
      else await kv.put(silenceKey(sensor), JSON.stringify({ silent_since: silence.silent_since }));
    },
    start(intervalMs, onError) {
      timer = setInterval(() => {
        flushing ??= flush()
          .catch(onError)
          .finally(() => {
            flushing = null;
          });
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      // The last counts, but a stop never waits out NATS timeouts (systemd would kill the service first).
      const last = (flushing ?? Promise.resolve()).then(flush);
      let timeout: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () =>
            reject(new Error(`NATS did not take the last counts within ${STOP_FLUSH_MS} ms; they are lost`)),
          STOP_FLUSH_MS,
        );
      });
      last.catch(() => {}); // reported through gaveUp or below, never unhandled
      try {
        await Promise.race([last, gaveUp]);
      } finally {
        clearTimeout(timeout);
      }
    },
  };

  function merge(into: SensorActivity, from: SensorActivity): void {
    into.records_received += from.records_received;
    into.requests_rejected += from.requests_rejected;
    into.last_seen = later(into.last_seen, from.last_seen);
    into.last_accepted = later(into.last_accepted, from.last_accepted);
    into.last_address ??= from.last_address;
    into.last_rejection_code ??= from.last_rejection_code ?? null;
    into.last_rejected_at = later(into.last_rejected_at, from.last_rejected_at);
  }
}
