// `check`'s silent sensors line: the active sensors the collector reported silent (nothing accepted within
// their expected interval, docs/operations.md) are a warning that names each; none watched: no line.
import type { Sensor } from '../store/registry.js';
import { sensorState } from '../store/sensor-state.js';
import type { SensorSilence } from '../store/store.js';
import type { CheckResult } from './local-checks.js';

export function checkSilentSensors(
  sensors: readonly Sensor[],
  silences: Record<string, SensorSilence>,
  configuredExpectEvery: string,
): CheckResult | null {
  const silent = sensors
    .map((s) => ({ name: s.name, ...sensorState(s, silences, configuredExpectEvery) }))
    .filter((s) => s.state === 'silent')
    .sort((a, b) => a.name.localeCompare(b.name));
  if (silent.length === 0) return null;
  return {
    name: 'sensors',
    status: 'warn',
    message: `${silent.length} silent sensor${silent.length === 1 ? '' : 's'}: ${silent.map((s) => `${s.name} (since ${s.silent_since})`).join(', ')}: is each still forwarding? (threatcol sensor show NAME)`,
  };
}
