// The dedupe window's compact key table: every key found with its id after growth, regular (non-random)
// keys do not degrade it, ids that are not UUIDs survive; the window answers as a model of its slices would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { newRecordId } from '../../src/records/record-id.js';
import { DedupeWindow, Reservation } from '../../src/store/files/dedupe/dedupe-window.js';
import { KeyTable, keyBytes } from '../../src/store/files/dedupe/key-table.js';

test('key table: 50k regular keys, found after growth with their ids, in short probe runs', () => {
  const table = new KeyTable(16);
  const ids: string[] = [];
  // Request keys as they are (16 bytes in base64url, not hashed): all zero but a counter, half of them also
  // as text that is hashed.
  const regular = (i: number) => {
    const bytes = Buffer.alloc(16);
    bytes.writeUInt32BE(i, 12);
    return i % 2 === 0 ? bytes.toString('base64url') : `k${String(i).padStart(21, '0')}`;
  };
  for (let i = 0; i < 50_000; i++) {
    const id = i % 1000 === 7 ? `not-a-uuid-${i}` : newRecordId();
    ids.push(id);
    assert.equal(table.add(keyBytes(regular(i)), id), true);
  }
  assert.equal(table.add(keyBytes(regular(5)), 'again'), false, 'a key is added once');
  for (let i = 0; i < 50_000; i += 1) {
    if (table.get(keyBytes(regular(i))) !== ids[i]) assert.fail(`key ${i}`);
  }
  assert.equal(table.get(keyBytes('absent-key')), undefined);
  assert.equal(table.size, 50_000);
  // Regular keys that clustered made runs of thousands of slots (every add and lookup walked them: quadratic
  // time); mixed well, the longest run stays as short as random keys'. Counted, not timed: a busy box is slow.
  const random = new KeyTable(16);
  for (let i = 0; i < 50_000; i++) random.add(keyBytes(newRecordId()), newRecordId());
  const longest = table.longestProbe();
  assert.ok(longest <= Math.max(64, 4 * random.longestProbe()), `longest probe run ${longest} slots`);
  assert.ok(table.bytes <= 50_000 * 64 * 2, `${table.bytes} bytes`);
});

test('dedupe window: a key is remembered for the window and forgotten within 9/8 of it; the bound holds', () => {
  const window = new DedupeWindow(8000, 1000);
  window.remember('a', 'id-a', 0);
  assert.equal(window.lookup('a', 7999)?.id, 'id-a');
  assert.equal(window.lookup('a', 9001), null);
  for (let i = 0; i < 1500; i++) window.remember(`k${i}`, `id-${i}`, 10_000 + i * 10);
  assert.ok(window.size <= 1000, `${window.size} keys held`);
  assert.ok(window.evicted > 0);
  assert.equal(window.lookup('k1499', 25_000)?.id, 'id-1499');
});

test('dedupe window: a key a failed append released and a later one stored outlives the slice that first held it', () => {
  const window = new DedupeWindow(8000, 1000); // slices of 1,000 ms
  const failed = new Reservation();
  assert.equal(window.claim('k', 'id-1', failed, 0), null);
  window.release(failed, false);
  assert.equal(window.lookup('k', 100), null, 'released: a retry is stored');
  for (const [id, at] of [
    ['id-2', 200],
    ['id-3', 5000],
  ] as const) {
    // The first retry fails too (in the first slice again), the second is stored in a later slice.
    const r = new Reservation();
    assert.equal(window.claim('k', id, r, at), null);
    window.release(r, id === 'id-3');
  }
  // The first slice expires at 9,000 and logged 'k' twice; the stored delivery's slice (5,000) holds it to 14,000.
  assert.equal(window.lookup('k', 12_000)?.id, 'id-3');
  assert.equal(window.size, 1);
  assert.equal(window.lookup('k', 14_000), null);
  assert.equal(window.size, 0);
});

test('dedupe window: an expired key not yet deleted (a few are per call) is no hit, and is claimed anew', () => {
  const window = new DedupeWindow(8000, 1000);
  for (let i = 0; i < 10; i++) window.remember(`k${i}`, `id-${i}`, i);
  // Expired at 9,000; two keys are deleted per call, so k9 is still in the table at the first call.
  const r = new Reservation();
  assert.equal(window.claim('k9', 'id-new', r, 9000), null, 'expired: stored again');
  window.release(r, true);
  assert.equal(window.lookup('k9', 9001)?.id, 'id-new');
  assert.equal(window.lookup('k8', 9002), null);
  for (let at = 9003; at < 9010; at++) window.lookup('x', at);
  assert.equal(window.size, 1, 'the expired keys are deleted, the new one kept');
});

test('property: any id comes back exactly as added (UUIDs packed in 16 bytes, anything else kept aside)', () => {
  const hex = fc.constantFrom(...'0123456789abcdefABCDEFg-'.split(''));
  const uuidLike = fc
    .array(hex, { minLength: 32, maxLength: 32 })
    .map(
      (c) =>
        `${c.slice(0, 8).join('')}-${c.slice(8, 12).join('')}-${c.slice(12, 16).join('')}-${c.slice(16, 20).join('')}-${c.slice(20).join('')}`,
    );
  const lowerUuid = fc.uuid({ version: 7 });
  fc.assert(
    fc.property(
      fc.array(fc.oneof(lowerUuid, uuidLike, fc.string({ maxLength: 40 })), { maxLength: 40 }),
      (ids) => {
        const table = new KeyTable(4);
        for (const [i, id] of ids.entries()) table.add(keyBytes(`key-${i}`), id);
        for (const [i, id] of ids.entries()) assert.equal(table.get(keyBytes(`key-${i}`)), id);
      },
    ),
    { seed: 11 },
  );
});

test('property: a deleted key is gone, every other key still found with its id (the probe runs close up)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 80 }), fc.boolean()), { minLength: 100, maxLength: 400 }),
      (ops) => {
        // A small table and few distinct keys: long probe runs that wrap around, the case deletion can break.
        const table = new KeyTable(8);
        const held = new Map<number, string>();
        for (const [n, add] of ops) {
          const key = keyBytes(`key-${n}`);
          if (add) assert.equal(table.add(key, `id-${n}`), !held.has(n));
          else assert.equal(table.delete(keyBytes(`key-${n}`)), held.delete(n));
          if (add && !held.has(n)) held.set(n, `id-${n}`);
          for (let m = 0; m <= 80; m++)
            assert.equal(table.get(keyBytes(`key-${m}`)), held.get(m), `key-${m}`);
        }
        assert.equal(table.size, held.size);
      },
    ),
    { seed: 12 },
  );
});

test('property: the window answers as a model of keys remembered from their slice for the window', () => {
  const WINDOW = 8000;
  const SLICE = 1000; // the window's own: 1/8 of it
  const op = fc.oneof(
    // A delivery of key k, stored or failed, `step` ms after the previous operation: several keys a slice, so
    // an expired slice still has keys to delete when the next calls come (two are deleted a call).
    fc.record({ k: fc.nat(30), stored: fc.boolean(), step: fc.integer({ min: 20, max: 150 }) }),
    // A quiet spell: the time moves on with lookups only.
    fc.record({ k: fc.nat(30), step: fc.integer({ min: 700, max: 4000 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 200, maxLength: 400 }), (ops) => {
      const window = new DedupeWindow(WINDOW);
      const model = new Map<string, { id: string; start: number }>();
      let now = 0;
      let serial = 0;
      const expected = (key: string) => {
        const m = model.get(key);
        return m !== undefined && m.start + SLICE > now - WINDOW ? m.id : null;
      };
      for (const o of ops) {
        now += o.step;
        const key = `k${o.k}`;
        if (!('stored' in o)) {
          assert.equal(window.lookup(key, now)?.id ?? null, expected(key), `lookup ${key} at ${now}`);
          continue;
        }
        const id = `id-${serial++}`;
        const r = new Reservation();
        const hit = window.claim(key, id, r, now);
        assert.equal(hit?.id ?? null, expected(key), `claim ${key} at ${now}`);
        window.release(r, o.stored);
        if (hit === null && o.stored) model.set(key, { id, start: now - (now % SLICE) });
        if (hit === null && !o.stored) model.delete(key);
      }
      for (let k = 0; k <= 30; k++) {
        assert.equal(window.lookup(`k${k}`, now)?.id ?? null, expected(`k${k}`), `k${k} at the end`);
      }
    }),
    { numRuns: 300 },
  );
});
