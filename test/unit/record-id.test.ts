import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { newRecordId } from '../../src/records/record-id.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The millisecond an id carries. */
const msOf = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);

// Ids of one process never go back in time, and the unit tests share one (test/_unit.test.ts): each test takes
// its times after the last id any test made.
test('record ids are UUIDv7 carrying the time they were made', () => {
  const now = msOf(newRecordId()) + 1_000;
  const id = newRecordId(now);
  assert.match(id, V7);
  assert.equal(msOf(id), now);
});

test('ids are unique and sort in the order they were made, within a millisecond and when the clock steps back', () => {
  const base = msOf(newRecordId()) + 60_000;
  const ids: string[] = [];
  for (let i = 0; i < 10_000; i++) ids.push(newRecordId(base)); // one millisecond: the counter carries over
  for (let i = 0; i < 100; i++) ids.push(newRecordId(base - 5_000)); // clock stepped back
  for (let i = 0; i < 100; i++) ids.push(newRecordId(base + 60_000 + i));
  for (const id of ids) assert.match(id, V7);
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
});

test('property: each id carries its own millisecond, however the times advance (the digits are cached per ms)', () => {
  let t = msOf(newRecordId()) + 1;
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constant(0), fc.nat(3), fc.nat(2 ** 40)), { maxLength: 50 }),
      (steps) => {
        for (const step of steps) {
          t += step;
          assert.equal(msOf(newRecordId(t)), t);
        }
        t += 1;
      },
    ),
    { seed: 7 },
  );
});
