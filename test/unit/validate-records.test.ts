// Property and unit tests: the record validators never crash and report bounded, path-named details.
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { compileCheck } from '../../src/schemas/compile-check.js';
import { hexGroups, isIpAddress } from '../../src/schemas/ip-address.js';
import { fastChecks, MAX_DETAILS, validateBody, validators } from '../../src/schemas/validate-records.js';
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

test('property: the compiled happy-path checker answers as ajv does, near every bound', () => {
  // Strings around each bound (64 for addresses and severity, 128 for field names, 1 KiB, 4 KiB) in UTF-16
  // units and in code points: astral characters count once in code points and twice in units.
  const around = (limit: number) =>
    fc
      .tuple(fc.integer({ min: 0, max: limit + 2 }), fc.integer({ min: 0, max: 3 }), fc.boolean())
      .map(([units, astral, lone]) => {
        const pairs = Math.min(astral * Math.floor(units / 8), Math.floor(units / 2));
        return '😀'.repeat(pairs) + 'x'.repeat(Math.max(0, units - 2 * pairs)) + (lone ? '\ud800' : '');
      });
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 1 }),
    around(64),
    around(1024),
    around(4096),
    fc.constantFrom('', '😀', '0', '00', '4', '5', '65535', '65536', '012', '1e3', ' 1', '-1', '-0'),
    fc.constantFrom(
      '192.0.2.1',
      '::1',
      'fe80::1%eth0',
      '1.2.3',
      '2026/11/21 10:15:30',
      '2026/02/30 10:15:30',
    ),
    fc.constantFrom(0, -0, -1, 4, 4.5, 5, 65535, 65536, 1e308, Number.POSITIVE_INFINITY, 0.1),
  );
  const name = fc.oneof(
    fc.constantFrom(...Object.keys(genericRecord()), ...Object.keys(firewallRecord()), 'severity', 'extra'),
    fc.string({ maxLength: 6 }),
    around(128),
  );
  const mutation = fc.oneof(
    fc.tuple(fc.constant('set' as const), name, value),
    fc.tuple(fc.constant('delete' as const), name, fc.constant(null)),
    fc.tuple(fc.constant('extras' as const), fc.integer({ min: 55, max: 70 }), fc.constant(null)),
  );
  fc.assert(
    fc.property(
      fc.constantFrom('firewall', 'generic') as fc.Arbitrary<'firewall' | 'generic'>,
      fc.array(mutation, { maxLength: 3 }),
      (endpoint, mutations) => {
        const record: Record<string, unknown> = endpoint === 'generic' ? genericRecord() : firewallRecord();
        for (const [op, key, v] of mutations) {
          if (op === 'set') record[key] = v;
          else if (op === 'delete') delete record[key];
          else for (let i = 0; i < key; i++) record[`x${i}`] = i;
        }
        const parsed = JSON.parse(JSON.stringify(record)) as unknown;
        assert.equal(fastChecks[endpoint](parsed), validators[endpoint](parsed), JSON.stringify(mutations));
      },
    ),
    { seed: 21, numRuns: 20_000 },
  );
});

test('a record schema with a keyword the compiled checker does not know is refused when compiling', () => {
  assert.throws(
    () => compileCheck({ type: 'object', properties: { a: { type: 'string', enum: ['x'] } as never } }, {}),
    /keyword "enum"/,
  );
  assert.throws(
    () => compileCheck({ type: 'object', properties: { a: { type: 'string', format: 'email' } } }, {}),
    /format "email"/,
  );
});
