// The files backend's dedupe claims: a delivery racing an identical one in flight waits for it, and gets its ids
// when it is stored or its error when it failed (and then the key is free for the next retry).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { localDedupeIndex } from '../../src/store/files/dedupe/dedupe-index.js';
import { DedupeWindow, Reservation } from '../../src/store/files/dedupe/dedupe-window.js';

const logger = pino({ level: 'silent' });

test('a claim racing an identical one in flight waits: the first ids once stored, its error if it failed', async () => {
  const index = localDedupeIndex(new DedupeWindow(120_000), () => 1_000, logger);
  const first = index.claim(['k1', 'k2'], ['id-1', 'id-2']);
  assert.ok(!(first instanceof Promise), 'nothing in flight: the claim is synchronous');
  assert.deepEqual(first.firstIds, [null, null]);
  const racing = index.claim(['k2', 'k3'], ['id-x', 'id-3']);
  assert.ok(racing instanceof Promise, 'k2 is in flight: the racing claim waits');
  let settled = false;
  void racing.then(() => {
    settled = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'still waiting while the first is not durable');
  first.settle(null);
  const second = await racing;
  assert.deepEqual(second.firstIds, ['id-2', null]);
  second.settle(null);
  // Stored: later claims see the ids at once.
  const later = index.claim(['k1', 'k3'], ['a', 'b']);
  assert.ok(!(later instanceof Promise));
  assert.deepEqual(later.firstIds, ['id-1', 'id-3']);
  later.settle(null);

  const failing = index.claim(['f'], ['id-f']);
  assert.ok(!(failing instanceof Promise));
  const waiter = index.claim(['f'], ['id-g']);
  assert.ok(waiter instanceof Promise);
  const boom = new Error('disk full');
  failing.settle(boom);
  await assert.rejects(waiter, boom);
  // The failed delivery's key is released: a retry stores it anew.
  const retry = index.claim(['f'], ['id-h']);
  assert.ok(!(retry instanceof Promise));
  assert.deepEqual(retry.firstIds, [null]);
  retry.settle(null);
});

test('property: a hit names the append storing its key while it is in flight, whatever the claims and releases before it', () => {
  const op = fc.oneof(
    fc.record({ claim: fc.integer({ min: 0, max: 7 }), into: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ release: fc.integer({ min: 0, max: 3 }), stored: fc.boolean() }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const window = new DedupeWindow(120_000);
      // The model: the appends in flight, by slot, with the keys each claimed first.
      const open: (Reservation | null)[] = [null, null, null, null];
      let n = 0;
      for (const o of ops) {
        if ('claim' in o) {
          const key = `k${o.claim}`;
          const r = open[o.into] ?? new Reservation();
          const hit = window.claim(key, `id-${n++}`, r, 1_000);
          if (r.keys.length > 0) open[o.into] = r;
          const holder = open.find((x) => x?.keys.includes(key)) ?? null;
          if (hit !== null) assert.equal(hit.pending, holder);
        } else {
          const r = open[o.release];
          if (!r) continue;
          window.release(r, o.stored);
          open[o.release] = null;
        }
        for (let k = 0; k < 8; k++) {
          const hit = window.lookup(`k${k}`, 1_000);
          const holder = open.find((x) => x?.keys.includes(`k${k}`)) ?? null;
          if (hit !== null) assert.equal(hit.pending, holder, `k${k}`);
        }
      }
    }),
    { numRuns: 300 },
  );
});
