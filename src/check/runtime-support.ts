// `threatcol check`, the runtime part: whether the Node.js line threatcol runs on (the one the package bundles)
// still gets security fixes, from the one table of LTS end-of-life dates below and an injected clock.
import type { CheckResult } from './local-checks.js';

/**
 * End of upstream security support of each Node.js LTS line (the Node.js release schedule). A new LTS line is
 * added here when threatcol first bundles it; odd lines are never LTS and never bundled.
 */
export const NODE_END_OF_LIFE: Readonly<Record<number, string>> = {
  18: '2025-04-30',
  20: '2026-04-30',
  22: '2027-04-30',
  24: '2028-04-30',
  26: '2029-04-30',
};

/** Within this many days of the end of life the check warns ahead, so a package update can be planned. */
export const END_OF_LIFE_NOTICE_DAYS = 90;

const DAY_MS = 86_400_000;

/** The `runtime` line of `threatcol check` for Node `version` (`v24.21.0`) at time `now` (ms since the epoch). */
export function checkRuntime(version: string, now: number): CheckResult {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  const end = NODE_END_OF_LIFE[major];
  const name = 'runtime';
  if (end === undefined) {
    return {
      name,
      status: 'warn',
      message: `Node.js ${version} is not a long-term support line whose end of life threatcol knows: run it on the runtime its package bundles`,
    };
  }
  // Support ends with the last day listed (UTC).
  const endsAt = Date.parse(`${end}T00:00:00Z`) + DAY_MS;
  const days = Math.ceil((endsAt - now) / DAY_MS);
  if (days <= 0) {
    return {
      name,
      status: 'warn',
      message: `Node.js ${version} reached its end of life on ${end} and gets no security fixes: install a threatcol package that bundles a supported Node.js line`,
    };
  }
  if (days <= END_OF_LIFE_NOTICE_DAYS) {
    return {
      name,
      status: 'warn',
      message: `Node.js ${version} reaches its end of life on ${end} (in ${days} days): plan an update to a threatcol package that bundles a newer line`,
    };
  }
  return { name, status: 'ok', message: `Node.js ${version}, security support until ${end}` };
}
