// Property and unit tests: the record validators never crash and report bounded, path-named details.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_DETAILS, validateBody } from '../../src/schemas/validate-records.js';
import { firewallRecord, genericRecord } from '../helpers/records.js';

test('valid records pass; each required field, when removed, is named', () => {
  assert.equal(validateBody('firewall', firewallRecord(), 1000).ok, true);
  assert.equal(validateBody('generic', genericRecord(), 1000).ok, true);
  for (const field of Object.keys(genericRecord())) {
    const r = genericRecord();
    delete r[field];
    const check = validateBody('generic', r, 1000);
    assert.equal(check.ok, false);
    assert.deepEqual(check.ok ? [] : check.details.map((d) => d.path), [`/${field}`]);
  }
});

test('addresses must be real IPv4 or IPv6', () => {
  for (const ip of ['10.0.0.1', '::1', '2001:db8::8a2e:370:7334', 'fe80::1']) {
    assert.equal(validateBody('generic', genericRecord({ source_ip: ip }), 1).ok, true, ip);
  }
  for (const ip of ['', '10.0.0', '256.0.0.1', 'example.com', ' 10.0.0.1', '1.2.3.4/24', ':::']) {
    assert.equal(validateBody('generic', genericRecord({ source_ip: ip }), 1).ok, false, ip);
  }
});

const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

test('property: arbitrary JSON never crashes either validator; failures carry 1..20 details', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('firewall', 'generic') as fc.Arbitrary<'firewall' | 'generic'>,
      fc.jsonValue(),
      (endpoint, body) => {
        const r = validateBody(endpoint, body, 1000);
        if (!r.ok) {
          assert.ok(r.details.length >= 1 && r.details.length <= MAX_DETAILS);
          for (const d of r.details) assert.equal(typeof d.message, 'string');
        }
      },
    ),
    { seed: 1, numRuns: 2000 },
  );
});

test('property: records with random field values are accepted only when every field is in range', () => {
  fc.assert(
    fc.property(anyValue, anyValue, anyValue, (port, level, ip) => {
      const r = validateBody(
        'generic',
        genericRecord({ destination_port: port, criticality: level, source_ip: ip }),
        1,
      );
      const portOk =
        (Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535) ||
        (typeof port === 'string' && /^(0|[1-9]\d{0,4})$/.test(port) && Number(port) <= 65535);
      const levelOk =
        (Number.isInteger(level) && (level as number) >= 0 && (level as number) <= 4) ||
        (typeof level === 'string' && /^[0-4]$/.test(level));
      const ipOk = typeof ip === 'string' && validateBody('generic', genericRecord({ source_ip: ip }), 1).ok;
      assert.equal(r.ok, portOk && levelOk && ipOk);
    }),
    { seed: 2, numRuns: 2000 },
  );
});
