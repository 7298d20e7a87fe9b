// `--expect-every` of `sensor add` and `sensor set`, and how every sensor view shows the interval in force.
import { effectiveExpectEvery, parseExpectEvery } from '../../config/expect-every.js';
import { formatDuration } from '../../config/format-duration.js';
import type { Config } from '../../config/schema.js';
import { ThreatcolError } from '../../errors.js';
import type { Sensor } from '../../store/registry.js';

/**
 * The registry's value for `--expect-every TEXT`: a duration in its shortest spelling, or `off`; null for
 * `default` (`sensor set` only: back to sensors.expectEvery); undefined when the option is absent.
 */
export function expectEveryOption(
  text: string | undefined,
  allowDefault: boolean,
): string | null | undefined {
  if (text === undefined) return undefined;
  if (allowDefault && text === 'default') return null;
  const ms = parseExpectEvery(text.trim());
  if (ms === null) {
    throw new ThreatcolError(
      'USAGE',
      `--expect-every "${text}" is not a duration of at least 1s (e.g. 15m, 1h, 1d), nor "off"${allowDefault ? ', nor "default"' : ''}`,
    );
  }
  return ms === 0 ? 'off' : formatDuration(ms);
}

/** The interval in force for `sensor`, as `--json` shows it: `1h`, or null when it is not watched. */
export function expectEveryView(sensor: Sensor, config: Config): string | null {
  const ms = effectiveExpectEvery(sensor.expect_every, config.sensors.expectEvery);
  return ms === 0 ? null : formatDuration(ms);
}

/** A line for the text views: the interval and where it comes from; none when off by default. */
export function expectEveryLines(sensor: Sensor, config: Config): string[] {
  const view = expectEveryView(sensor, config);
  const from = sensor.expect_every === undefined ? ' (sensors.expectEvery, the default)' : '';
  if (view === null) return sensor.expect_every === undefined ? [] : ['Silence watch: off.'];
  return [`Silence watch: silent after ${view} without an accepted record${from}.`];
}
