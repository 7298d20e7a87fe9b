// The one connection policy (src/connection-slots.ts): caps per address group (IPv6 by /64) and in all, the
// oldest unproven connection closed for a newcomer, proven ones never.
import assert from 'node:assert/strict';
import test from 'node:test';
import { addressGroup } from '../../src/address-group.js';
import { SlotTable } from '../../src/connection-slots.js';

test('a full address group gives up its own oldest unproven member; all proven, the newcomer is refused', () => {
  const table = new SlotTable<string>({ max: 100, perGroup: 3, unproven: 100 });
  for (const key of ['a1', 'a2', 'a3']) assert.deepEqual(table.admit(key, 'a'), []);
  assert.deepEqual(table.admit('b1', 'b'), [], 'another group has room of its own');
  table.prove('a1');
  assert.deepEqual(table.admit('a4', 'a'), ['a2'], 'the oldest unproven of the group, not the proven one');
  assert.deepEqual(table.admit('a5', 'a'), ['a3']);
  table.prove('a4');
  table.prove('a5');
  assert.equal(table.admit('a6', 'a'), null, 'every member proven: refused');
  assert.equal(table.has('b1'), true, 'another group is never touched');
  assert.equal(table.size, 4);
});

test('IPv6 addresses of one /64 share a group; the next /64 is a group of its own', () => {
  const table = new SlotTable<string>({ max: 100, perGroup: 2, unproven: 100 });
  const same = ['2001:db8:1:2::a', '2001:db8:1:2:ffff:ffff:ffff:1', '2001:0db8:0001:0002::77'];
  assert.equal(new Set(same.map(addressGroup)).size, 1);
  assert.deepEqual(table.admit(same[0] as string, addressGroup(same[0] as string)), []);
  assert.deepEqual(table.admit(same[1] as string, addressGroup(same[1] as string)), []);
  assert.deepEqual(
    table.admit(same[2] as string, addressGroup(same[2] as string)),
    [same[0]],
    'a third address of the same /64 makes room in it',
  );
  assert.deepEqual(table.admit('2001:db8:1:3::a', addressGroup('2001:db8:1:3::a')), [], 'the next /64');
  assert.deepEqual(table.admit('::ffff:192.0.2.1', addressGroup('::ffff:192.0.2.1')), []);
  assert.deepEqual(table.admit('192.0.2.1', addressGroup('192.0.2.1')), [], 'mapped IPv4 is its IPv4');
  assert.deepEqual(table.admit('192.0.2.1b', addressGroup('192.0.2.1')), ['::ffff:192.0.2.1']);
});

test('a full table closes the oldest unproven of all for a newcomer, who stays for `unproven` arrivals', () => {
  const table = new SlotTable<number>({ max: 4, perGroup: 4, unproven: 4 });
  for (let i = 0; i < 4; i++) assert.deepEqual(table.admit(i, `flood${i}`), []);
  assert.deepEqual(table.admit(100, 'sensor'), [0], 'the newcomer is taken, the oldest silent one closed');
  // Three more arrivals: the sensor is not yet the oldest; it proves itself, and the flood churns around it.
  for (let i = 4; i < 7; i++) assert.deepEqual(table.admit(i, `flood${i}`), [i - 3]);
  assert.equal(table.has(100), true);
  table.prove(100);
  for (let i = 7; i < 20; i++) assert.equal(table.admit(i, `flood${i}`)?.includes(100), false);
  assert.equal(table.has(100), true, 'a proven member is never closed for a newcomer');
  assert.equal(table.size, 4);
});

test('the unproven share: past it a newcomer closes the oldest unproven even with room left in all', () => {
  const table = new SlotTable<string>({ max: 4, perGroup: 4, unproven: 2 });
  assert.deepEqual(table.admit('p', 'a'), []);
  table.prove('p');
  assert.deepEqual(table.admit('u1', 'b'), []);
  assert.deepEqual(table.admit('u2', 'c'), []);
  assert.deepEqual(table.admit('u3', 'd'), ['u1']);
  assert.equal(table.unprovenSize, 2);
  table.prove('u2');
  table.prove('u3');
  assert.deepEqual(table.admit('u4', 'e'), []);
  assert.deepEqual(table.admit('u5', 'f'), ['u4'], 'full in all: the one unproven');
  table.prove('u5');
  assert.equal(table.admit('u6', 'g'), null, 'full of proven members: refused');
  table.release('p');
  assert.deepEqual(table.admit('u6', 'g'), []);
});

test('group and total full at once: one member of the group makes room for both caps', () => {
  const table = new SlotTable<string>({ max: 3, perGroup: 2, unproven: 3 });
  assert.deepEqual(table.admit('b1', 'b'), []);
  assert.deepEqual(table.admit('a1', 'a'), []);
  assert.deepEqual(table.admit('a2', 'a'), []);
  assert.deepEqual(table.admit('a3', 'a'), ['a1'], 'not b1 as well');
  assert.equal(table.size, 3);
});
