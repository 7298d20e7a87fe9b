import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { InFlight, type InFlightEntry } from '../../src/inputs/https/in-flight.js';

test('the in-flight list holds exactly what was added and not yet deleted, in any order of operations', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(50)), { maxLength: 200 }), (ops) => {
      const list = new InFlight<number>();
      const model = new Map<number, InFlightEntry<number>>();
      let next = 0;
      for (const [add, pick] of ops) {
        if (add || model.size === 0) {
          const value = next++;
          model.set(value, list.add(value));
        } else {
          const value = [...model.keys()][pick % model.size] as number;
          const entry = model.get(value) as InFlightEntry<number>;
          list.delete(entry);
          list.delete(entry); // a second close of the same response changes nothing
          model.delete(value);
          // A finished request keeps no link into the list (nothing it points to stays alive through it).
          assert.equal(entry.prev, null);
          assert.equal(entry.next, null);
        }
        assert.equal(list.size, model.size);
        assert.deepEqual(
          list.values().sort((a, b) => a - b),
          [...model.keys()].sort((a, b) => a - b),
        );
      }
      list.clear();
      assert.equal(list.size, 0);
      assert.deepEqual(list.values(), []);
    }),
  );
});
