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
