// The fixed-size top-K counter behind the dashboard's top lists: exact until full, bounded after, O(1) steps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SpaceSaving } from '../../src/admin/space-saving.js';

test('exact while it holds every name; a name with a lone surrogate is still one name', () => {
  const sketch = new SpaceSaving(4);
  const odd = `${'x'.repeat(20)}\ud800`;
  for (const name of ['a', odd, 'a', odd, odd, 'b']) sketch.add(name);
  const counts = Object.fromEntries(sketch.entries().map((e) => [e.name, e.count]));
  assert.deepEqual(counts, { a: 2, [odd]: 3, b: 1 });
  assert.equal(sketch.evicted, false);
  assert.deepEqual(sketch.size, { names: 3, chars: 2 + odd.length });
});

test('any stream: at most `capacity` names, counts sum to the stream length, none under its true count', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 8 }),
      fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 300 }),
      (capacity, stream) => {
        const sketch = new SpaceSaving(capacity);
        const truth = new Map<string, number>();
        for (const n of stream) {
          sketch.add(`name ${n}`);
          truth.set(`name ${n}`, (truth.get(`name ${n}`) ?? 0) + 1);
        }
        const entries = sketch.entries();
        assert.ok(entries.length <= capacity);
        assert.equal(
          entries.reduce((sum, e) => sum + e.count, 0),
          stream.length,
        );
        for (const e of entries) {
          const real = truth.get(e.name) ?? 0;
          assert.ok(
            e.count >= real && e.count <= real + stream.length / capacity,
            `${e.name}: ${e.count} vs ${real}`,
          );
        }
        // Every name seen more than length / capacity times is held.
        for (const [name, real] of truth) {
          if (real > stream.length / capacity)
            assert.ok(
              entries.some((e) => e.name === name),
              name,
            );
        }
      },
    ),
  );
});
