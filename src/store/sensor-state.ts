// A sensor's state as every view shows it (`sensor list|show`, `check`, the dashboard, /metrics): active,
// silent since when (a silence the watcher reported, src/sensors/), or revoked.
import { effectiveExpectEvery } from '../config/expect-every.js';
import type { Sensor } from './registry.js';
import type { SensorSilence } from './store.js';

export type SensorState = 'active' | 'silent' | 'revoked';

/** A silence counts only for an active sensor that is watched (an interval from itself or sensors.expectEvery). */
export function sensorState(
  sensor: Sensor,
  silences: Record<string, SensorSilence>,
  configuredExpectEvery: string,
): { state: SensorState; silent_since: string | null } {
  if (sensor.status === 'revoked') return { state: 'revoked', silent_since: null };
  const silence = Object.hasOwn(silences, sensor.name) ? silences[sensor.name] : undefined;
  return silence && effectiveExpectEvery(sensor.expect_every, configuredExpectEvery) > 0
    ? { state: 'silent', silent_since: silence.silent_since }
    : { state: 'active', silent_since: null };
}
