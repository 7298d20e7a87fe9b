// Unit tests: threat name splitting and criticality derivation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveCriticality } from '../../src/records/criticality.js';
import { splitThreatName, threatIdFrom } from '../../src/records/threat-name.js';

test('splits PAN-OS threat names and finds the numeric id', () => {
  assert.deepEqual(splitThreatName('EICAR Test File Detection(86708)'), {
    name: 'EICAR Test File Detection',
    id: '86708',
  });
  assert.deepEqual(splitThreatName('Name With (Parens) (12)'), { name: 'Name With (Parens)', id: '12' });
  assert.deepEqual(splitThreatName('No id here'), { name: 'No id here', id: null });
  assert.deepEqual(splitThreatName('(12345)'), { name: '(12345)', id: null });
  assert.equal(threatIdFrom('86708', 'x'), '86708');
  assert.equal(threatIdFrom('Eicar(39040)', null), '39040');
  assert.equal(threatIdFrom('custom-id', '5'), '5');
  assert.equal(threatIdFrom('custom-id', null), 'custom-id');
});

test('criticality: severity first, then category, then default', () => {
  const rules = { defaultCriticality: 2, criticalityByCategory: { spyware: 4, virus: 3 } };
  assert.deepEqual(deriveCriticality('informational', 'virus', rules), {
    criticality: 0,
    source: 'severity',
  });
  assert.deepEqual(deriveCriticality(' Critical ', 'virus', rules), { criticality: 4, source: 'severity' });
  assert.deepEqual(deriveCriticality('LOW', '', rules), { criticality: 1, source: 'severity' });
  assert.deepEqual(deriveCriticality('$severity', 'Spyware', rules), { criticality: 4, source: 'category' });
  assert.deepEqual(deriveCriticality(undefined, 'virus', rules), { criticality: 3, source: 'category' });
  assert.deepEqual(deriveCriticality(undefined, 'toString', rules), { criticality: 2, source: 'default' });
  assert.deepEqual(deriveCriticality(3, 'other', rules), { criticality: 2, source: 'default' });
});
