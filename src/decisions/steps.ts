// Work done in steps (DESIGN 15): choosing and rendering a feed walk every block, hundreds of milliseconds for a
// large feed, on the thread that takes records. Written once as a generator that yields every few thousand
// items, it runs whole where a caller waits anyway (the CLI, tests) and in slices where requests wait behind it
// (the feeds served by the HTTPS listener): other callbacks run between the slices.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work that yields between its steps and returns a T. */
export type Steps<T> = Generator<void, T, void>;

/** How many items a step takes before it yields. */
export const ITEMS_PER_STEP = 4096;

/** Runs `steps` to the end at once. */
export function runWhole<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs `steps` in slices of about `sliceMs`, letting the event loop turn between slices. */
export async function runInSlices<T>(steps: Steps<T>, sliceMs: number): Promise<T> {
  let started = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - started >= sliceMs) {
      await nextTurn();
      started = performance.now();
    }
  }
}
