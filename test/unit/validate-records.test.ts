// Property and unit tests: the record validators never crash and report bounded, path-named details.
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  hexGroups,
  isIpAddress,
  MAX_DETAILS,
  validateBody,
  validators,
} from '../../src/schemas/validate-records.js';
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

test('property: the hand-written IPv6 reader: every hex-group address takes it; isIpAddress agrees with isIP', () => {
  const group = fc.stringMatching(/^[0-9a-fA-F]{1,4}$/);
  // Eight groups, then optionally a run of them (empty to all eight) compressed to "::".
  const address = fc
    .tuple(fc.array(group, { minLength: 8, maxLength: 8 }), fc.nat(8), fc.nat(8), fc.boolean())
    .map(([groups, a, b, compress]) => {
      if (!compress) return groups.join(':');
      const [from, to] = a <= b ? [a, b] : [b, a];
      if (to - from < 1) return groups.join(':');
      return `${groups.slice(0, from).join(':')}::${groups.slice(to).join(':')}`;
    });
  fc.assert(
    fc.property(address, (s) => {
      assert.equal(isIP(s), 6, s);
      assert.ok(hexGroups(s), `the fast path takes ${s}`);
    }),
    { seed: 5, numRuns: 3000 },
  );
  const noise = fc.string({
    unit: fc.constantFrom('0', '1', 'a', 'F', 'g', ':', ':', '.', '%', ' '),
    maxLength: 42,
  });
  const tail = fc.constantFrom('', ':', '::', ':1', '%eth0', '.1', ':1.2.3.4', ':::', 'x');
  const mutated = fc.tuple(address, tail, fc.nat(45)).map(([a, t, cut]) => (a + t).slice(0, cut) + t);
  fc.assert(
    fc.property(fc.oneof(address, noise, mutated, fc.string({ maxLength: 40 })), (s) => {
      if (hexGroups(s)) assert.equal(isIP(s), 6, `hexGroups accepted ${JSON.stringify(s)}`);
      assert.equal(isIpAddress(s), isIP(s) !== 0, JSON.stringify(s));
    }),
    { seed: 6, numRuns: 20000 },
  );
});

test('property: the hand-written IPv4 reader accepts exactly what node:net isIP accepts', () => {
  const octet = fc.oneof(
    fc.integer({ min: 0, max: 300 }).map(String),
    fc.constantFrom('00', '01', '010', '0255', '-1', '', ' 1', '1 ', 'a', '1e2', '٣'),
  );
  const quad = fc.array(octet, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'));
  const noise = fc.string({
    unit: fc.constantFrom('0', '1', '2', '5', '9', '.', ':', 'a', 'f', '%', ' '),
    maxLength: 18,
  });
  fc.assert(
    fc.property(fc.oneof(quad, noise, fc.string({ maxLength: 20 })), (s) => {
      assert.equal(isIpAddress(s), isIP(s) !== 0, JSON.stringify(s));
    }),
    { seed: 3, numRuns: 5000 },
  );
});

test('property: the fast validator (first error only) and the detailed one agree on every body', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('firewall', 'generic') as fc.Arbitrary<'firewall' | 'generic'>,
      fc.oneof(
        fc.jsonValue(),
        fc.record({ source_ip: fc.string(), destination_port: fc.jsonValue(), criticality: fc.jsonValue() }),
      ),
      fc.integer({ min: 0, max: 3 }),
      (endpoint, value, copies) => {
        const base = endpoint === 'generic' ? genericRecord() : firewallRecord();
        const record =
          typeof value === 'object' && value !== null && !Array.isArray(value)
            ? { ...base, ...value }
            : value;
        const body =
          copies === 0 ? record : Array.from({ length: copies }, (_, i) => (i === 0 ? base : record));
        const detailed = Array.isArray(body)
          ? body.length > 0 && body.every((r) => validators[endpoint](r))
          : validators[endpoint](body);
        assert.equal(validateBody(endpoint, body, 1000).ok, detailed);
      },
    ),
    { seed: 4, numRuns: 2000 },
  );
});
