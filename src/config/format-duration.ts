// Durations as the CLI and the collector's own records spell them: `90000` -> `1m30s`.

const UNIT_MS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/** The shortest spelling that the CLI's parseDuration (cli/duration.ts) reads back to the same value. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  let rest = ms;
  let out = '';
  for (const [unit, size] of UNIT_MS) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}
