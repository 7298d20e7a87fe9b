// Polls a condition until it holds: tests await events, never a fixed sleep.

/** Calls `check` every `everyMs` until it holds; returns the milliseconds it took, or throws after `limitMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  limitMs: number,
  what = 'the condition',
  everyMs = 25,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Waits until `remaining()` reaches 0 for work whose pace is the machine's (forwarding at a low priority, a
 * backlog draining): fails only when it stops shrinking for `stallMs`, not after a fixed time, so a saturated box
 * that does the work slowly passes and a hang still fails. `remaining` counts what is left (records not yet
 * delivered, say); `limitMs` is an outer hang guard.
 */
export async function untilDrained(
  remaining: () => number | Promise<number>,
  stallMs: number,
  what = 'the work',
  options: { limitMs?: number; everyMs?: number } = {},
): Promise<number> {
  const started = Date.now();
  let least = Number.POSITIVE_INFINITY;
  let progressAt = started;
  for (;;) {
    const left = await remaining();
    const now = Date.now();
    if (left <= 0) return now - started;
    if (left < least) {
      least = left;
      progressAt = now;
    }
    if (now - progressAt > stallMs)
      throw new Error(`${what}: ${left} left, no progress in ${stallMs} ms (after ${now - started} ms)`);
    if (now - started > (options.limitMs ?? 20 * 60_000))
      throw new Error(`${what}: ${left} left after ${now - started} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 50));
  }
}

/**
 * A hang guard for what the outputs' thread does (start, forward, prune): it runs at nice +15, so on a box whose
 * cores are busy it gets ~3 % of one, and a step that takes 100 ms when the box is quiet can take seconds.
 */
export const OUTPUTS_THREAD_MS = 60_000;
