// What the silence watcher decides at one look (pure): which watched sensors went silent, which came back, and
// which silences to forget without a word (the sensor was revoked, deleted or is no longer watched).
import { effectiveExpectEvery } from '../config/expect-every.js';
import type { Sensor } from '../store/registry.js';
import type { SensorActivity, SensorSilence } from '../store/store.js';

/** One change the outputs hear of: a sensor went silent, or sent again. */
export interface SilenceEvent {
  kind: 'silent' | 'back';
  sensor: string;
  /** When its interval ran out. */
  silent_since: string;
  /** Its last accepted record (null: none known). */
  last_seen: string | null;
  /** The interval in force, in milliseconds. */
  expect_every_ms: number;
  /** silent: from silent_since to now; back: from silent_since to the record that ended it. */
  silent_for_ms: number;
  at: string;
}

export interface SilenceLook {
  events: SilenceEvent[];
  /** Silences to forget with no event. */
  dropped: string[];
}

const time = (iso: string | null | undefined): number => {
  const ms = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
};

/**
 * One look at every sensor. A watched active sensor is silent once nothing of it was accepted for its interval,
 * counted from its last accepted record, its creation or `startedAt` (the watcher's start), whichever is
 * latest: a collector that was down does not find every sensor silent the moment it starts.
 */
export function lookForSilence(input: {
  sensors: readonly Sensor[];
  activity: Record<string, SensorActivity>;
  silences: Record<string, SensorSilence>;
  configuredExpectEvery: string;
  startedAt: number;
  now: number;
  /**
   * How late a record accepted elsewhere may reach the stats read here (a worker reports every second, another
   * collector on NATS every store.statsIntervalMs): a silence is reported only this much after it began, so a
   * record on its way does not make a silence and a way back of it.
   */
  slackMs?: number;
}): SilenceLook {
  const { now } = input;
  const at = new Date(now).toISOString();
  const events: SilenceEvent[] = [];
  const dropped: string[] = [];
  const watched = new Set<string>();
  for (const sensor of input.sensors) {
    const interval = effectiveExpectEvery(sensor.expect_every, input.configuredExpectEvery);
    if (sensor.status !== 'active' || interval === 0) continue;
    watched.add(sensor.name);
    const activity = Object.hasOwn(input.activity, sensor.name) ? input.activity[sensor.name] : undefined;
    const lastSeen = activity?.last_accepted ?? null;
    const lastMs = time(lastSeen);
    const silence = Object.hasOwn(input.silences, sensor.name) ? input.silences[sensor.name] : undefined;
    const base = { sensor: sensor.name, last_seen: lastSeen, expect_every_ms: interval, at };
    if (silence) {
      const sinceMs = time(silence.silent_since);
      if (lastMs > sinceMs) {
        events.push({
          ...base,
          kind: 'back',
          silent_since: silence.silent_since,
          silent_for_ms: lastMs - sinceMs,
        });
      }
      continue;
    }
    const from = Math.max(lastMs, time(sensor.created_at), input.startedAt);
    if (now - from > interval + (input.slackMs ?? 0)) {
      events.push({
        ...base,
        kind: 'silent',
        silent_since: new Date(from + interval).toISOString(),
        silent_for_ms: now - from - interval,
      });
    }
  }
  for (const name of Object.keys(input.silences)) if (!watched.has(name)) dropped.push(name);
  return { events, dropped };
}
