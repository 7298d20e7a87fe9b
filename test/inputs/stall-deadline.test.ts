// syslog.stallTimeoutMs's clock: runs while one thing is owed, restarts for a new one, stops when nothing is owed.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import test from 'node:test';
import { StallDeadline } from '../../src/inputs/syslog/stall-deadline.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A deadline of `ms` and when it expired (ms after it was made), or null. */
function deadline(ms: number): { d: StallDeadline; expiredAt: () => number | null } {
  const made = performance.now();
  let at: number | null = null;
  const d = new StallDeadline(ms, () => {
    at = performance.now() - made;
  });
  return { d, expiredAt: () => at };
}

test('the same thing owed for the timeout expires once; owing it again (a read of more of it) does not restart it', async () => {
  const { d, expiredAt } = deadline(60);
  d.owe(1);
  await sleep(30);
  d.owe(1);
  await sleep(150);
  const at = expiredAt();
  assert.ok(at !== null && at >= 59, `expired at ${at}`);
  d.owe(1);
  await sleep(100);
  assert.equal(expiredAt(), at, 'expired once, then stopped');
});

test('something new owed restarts the clock; nothing owed stops it', async () => {
  const next = deadline(80);
  next.d.owe(1);
  await sleep(50);
  next.d.owe(2); // the frame ended and another began
  await sleep(300);
  const at = next.expiredAt();
  assert.ok(at !== null && at >= 129, `expired at ${at}: 80 ms after the second frame began`);

  const settled = deadline(40);
  settled.d.owe(1);
  await sleep(10);
  settled.d.owe(null);
  await sleep(150);
  assert.equal(settled.expiredAt(), null, 'nothing owed: never expires');
  settled.d.owe(1);
  await sleep(150);
  assert.ok((settled.expiredAt() as number) >= 199, 'owing again starts the clock afresh');

  const stopped = deadline(40);
  stopped.d.owe(1);
  stopped.d.stop(); // the connection closed
  await sleep(120);
  assert.equal(stopped.expiredAt(), null);
});
