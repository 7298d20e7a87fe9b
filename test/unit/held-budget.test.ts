// The bytes all syslog readers may hold together (held-bytes.ts): past the budget the message that began longest
// ago is let go (its owner told), an idle reader's kept buffer before any message, the asker's own when it is
// the oldest; what is held never passes the budget.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { HeldBudget, HeldBytes } from '../../src/held-bytes.js';

const bytes = (n: number) => Buffer.alloc(n, 0x61);

test('a reader growing past the budget lets go of the oldest message; an idle reader only gives back its buffer', () => {
  const budget = new HeldBudget(3 * 4096);
  const evicted: string[] = [];
  const reader = (name: string) => new HeldBytes(4096, budget, () => evicted.push(name));
  const a = reader('a');
  const b = reader('b');
  const idle = reader('idle');
  idle.append(bytes(100));
  idle.take(); // a small buffer kept for its next message
  a.append(bytes(4000));
  b.append(bytes(4000));
  assert.equal(budget.used, 4096 + 4096 + 256);
  const c = reader('c');
  c.append(bytes(4000));
  assert.equal(evicted.length, 0, 'the idle buffer made room');
  assert.equal(idle.capacity, 0);
  const d = reader('d');
  d.append(bytes(4000));
  assert.deepEqual(evicted, ['a'], 'then the oldest message');
  assert.equal(a.length, 0);
  assert.equal(budget.used, 3 * 4096);
  // A new message needs room: b's, now the oldest, is let go.
  const e = new HeldBytes(8192, budget, () => evicted.push('e'));
  e.append(bytes(10));
  assert.deepEqual(evicted, ['a', 'b'], 'a new message takes the place of the oldest');
  b.append(bytes(10));
  assert.equal(b.length, 10, 'b holds a new message of its own');
});

test("an idle buffer is given back before any message, wherever its reader stands; the oldest message goes, the asker's own too", () => {
  const budget = new HeldBudget(2 * 4096 + 256);
  const evicted: string[] = [];
  const reader = (name: string, limit = 4096) => new HeldBytes(limit, budget, () => evicted.push(name));
  const a = reader('a');
  const idle = reader('idle');
  a.append(bytes(4000)); // a's message began first
  idle.append(bytes(100));
  idle.take(); // idle since after a began
  const b = reader('b');
  b.append(bytes(4000));
  assert.equal(budget.used, 2 * 4096 + 256);
  const c = reader('c');
  c.append(bytes(10));
  assert.equal(evicted.length, 0, 'the idle buffer made room, not a message');
  assert.equal(idle.capacity, 0);
  const big = new HeldBytes(16_384, budget, () => evicted.push('big'));
  big.append(bytes(10));
  assert.deepEqual(evicted, ['a'], "a newcomer takes the oldest message's room");
  assert.equal(a.capacity, 0);
  big.append(bytes(8000));
  assert.deepEqual(
    evicted,
    ['a', 'b'],
    'growing, it takes the room of b, whose message began before its own',
  );
  // c's message is now the oldest: growing past the budget, c is let go itself.
  c.append(bytes(4000));
  assert.deepEqual(evicted, ['a', 'b', 'c']);
  assert.equal(c.capacity, 0);
  assert.equal(budget.used, big.capacity);
});

test('property: whatever readers append and take, the budget is never passed and its count is what they hold', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(7), fc.oneof(fc.constant(-1), fc.integer({ min: 1, max: 5000 }))), {
        maxLength: 300,
      }),
      (steps) => {
        const budget = new HeldBudget(16_384);
        const readers = Array.from({ length: 8 }, () => new HeldBytes(8192, budget));
        for (const [r, n] of steps) {
          const reader = readers[r] as HeldBytes;
          if (n === -1) reader.take();
          else reader.append(bytes(n));
          const held = readers.reduce((sum, x) => sum + x.capacity, 0);
          assert.equal(budget.used, held);
          assert.ok(held <= 16_384, `${held} held`);
        }
      },
    ),
    { seed: 20261129, numRuns: 300 },
  );
});
