// Unit and property tests: body parsing, prototype-poisoning refusal and the firewall quoting repair.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ThreatcolError } from '../../src/errors.js';
import { parseJsonBody } from '../../src/server/parse-json.js';
import { repairUnescapedQuotes } from '../../src/server/repair-json.js';

const parse = (text: string, repair = true) => parseJsonBody(Buffer.from(text), repair);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ThreatcolError);
    return { code: error.code, details: error.details };
  }
  assert.fail('expected a ThreatcolError');
};

test('parses plain JSON and strips a BOM', () => {
  assert.deepEqual(parse('{"a":1}'), { value: { a: 1 }, repaired: false });
  assert.deepEqual(parse('\ufeff[1]'), { value: [1], repaired: false });
});

test('invalid JSON reports its position', () => {
  const e = codeOf(() => parse('{"a":1,}', false));
  assert.equal(e.code, 'INVALID_JSON');
  assert.equal(e.details?.[0]?.position, 7);
});

test('invalid UTF-8 is refused', () => {
  const e = codeOf(() => parseJsonBody(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), true));
  assert.equal(e.code, 'INVALID_JSON');
});

test('prototype-poisoning keys are refused, nested too', () => {
  for (const text of ['{"__proto__":{"x":1}}', '[{"a":{"constructor":{"prototype":{"x":1}}}}]']) {
    assert.equal(codeOf(() => parse(text)).code, 'INVALID_JSON', text);
  }
  assert.deepEqual(parse('{"constructor":"ok"}').value, { constructor: 'ok' });
});

test('repairs raw quotes and backslashes inside values, and says so', () => {
  const broken = '{"threat_name":"Bad "quoted" thing","app":"C:\\dir\\x","src":"1.2.3.4","path":"C:\\"}';
  const r = parse(broken);
  assert.equal(r.repaired, true);
  assert.deepEqual(r.value, {
    threat_name: 'Bad "quoted" thing',
    app: 'C:\\dir\\x',
    src: '1.2.3.4',
    path: 'C:\\',
  });
  assert.deepEqual(parse('[{"a":"x"y"},{"a":"b"}]').value, [{ a: 'x"y' }, { a: 'b' }]);
  assert.equal(codeOf(() => parse('{"a":"x"y"}', false)).code, 'INVALID_JSON');
});

test('property: repair round-trips any string values a template would paste raw', () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.constantFrom('a', 'threat_name', 'app', 'src'), fc.string({ maxLength: 20 }), {
        minKeys: 1,
      }),
      (record) => {
        // A firewall pastes the raw value between quotes; only " and \ break the JSON (control chars aside).
        // biome-ignore lint/suspicious/noControlCharactersInRegex: raw control characters are exactly what is excluded here
        fc.pre(Object.values(record).every((v) => !/[\u0000-\u001f]/.test(v) && !/\\[u"\\/bfnrt]/.test(v)));
        fc.pre(Object.values(record).every((v) => !/"\s*[,:}\]]/.test(v) && !v.endsWith('\\')));
        const text = `{${Object.entries(record)
          .map(([k, v]) => `"${k}":"${v}"`)
          .join(',')}}`;
        const r = parse(text);
        assert.deepEqual(r.value, { ...record });
      },
    ),
    { seed: 11, numRuns: 500 },
  );
});

test('property: no input crashes the parser; it returns a value or INVALID_JSON', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.json(),
        fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a).toString('latin1')),
      ),
      (s) => {
        try {
          parse(s);
        } catch (error) {
          assert.ok(error instanceof ThreatcolError);
          assert.equal(error.code, 'INVALID_JSON');
        }
      },
    ),
    { seed: 3, numRuns: 3000 },
  );
});

test('repair is linear: a 1 MB pathological body is handled quickly', () => {
  const text = `{"a":"${'"x'.repeat(500_000)}"}`;
  const started = process.hrtime.bigint();
  repairUnescapedQuotes(text);
  // Not a speed goal: a quadratic scan would take minutes here, which the test timeout catches.
  assert.ok(process.hrtime.bigint() - started < 30_000_000_000n);
});
