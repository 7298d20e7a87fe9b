// A bounded wait: for start-up steps that must not hold serve back for good (the sensor registry, the outputs'
// start positions) and for a NATS connection's drain on close.

/** `promise`, or `ms` elapsed, whichever is first (the timer is cleared either way). */
export function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise.then(() => {}), timeout]).finally(() => clearTimeout(timer));
}
