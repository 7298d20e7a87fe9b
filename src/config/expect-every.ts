// How often a sensor is expected to send (`sensors.expectEvery`, `sensor add|set --expect-every`): one parser for
// the configuration, the registry's entries, the CLI and the silence watcher.
import { parseBlockDuration } from './blocklist-schema.js';

/** The shortest interval: the watcher looks every 2 s, so anything shorter would only flap. */
export const MIN_EXPECT_EVERY_MS = 1000;

/** `1h`, `30m`, `2d` to milliseconds, 0 for `off`; null when neither (or under a second, or over ten years). */
export function parseExpectEvery(text: string): number | null {
  if (text === 'off') return 0;
  const ms = parseBlockDuration(text);
  return ms !== null && ms >= MIN_EXPECT_EVERY_MS ? ms : null;
}

/**
 * A sensor's interval in milliseconds (0: not watched): its own (`expect_every` in the registry, a duration or
 * `off`), else the configured default. A value neither parses to is treated as off.
 */
export function effectiveExpectEvery(own: string | undefined, configured: string): number {
  return parseExpectEvery(own ?? configured) ?? 0;
}
