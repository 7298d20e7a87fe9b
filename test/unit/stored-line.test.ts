import assert from 'node:assert/strict';
import test from 'node:test';
import { setFlagsFromString } from 'node:v8';
import fc from 'fast-check';
import { loadConfig } from '../../src/config/load-config.js';
import { parseJsonBody } from '../../src/json/parse-json.js';
import { newRecordId } from '../../src/records/record-id.js';
import { encodeLines, originalJson, storedLine } from '../../src/records/stored-line.js';
import {
  buildFirewallRecord,
  buildGenericRecord,
  type ReceiptContext,
} from '../../src/records/stored-record.js';
import { type FirewallRecordInput, firewallRecordSchema } from '../../src/schemas/firewall-record.js';
import type { GenericRecordInput } from '../../src/schemas/generic-record.js';

const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir: '/tmp' } });

// Strings a sender may choose: quotes, backslashes, control characters, non-ASCII, astral characters.
// The tricky unit: what JSON.stringify escapes (quote, backslash, C0 controls, lone surrogates) beside what it
// does not (DEL, U+2028, a paired surrogate), so both of stored-line's quoting paths are taken.
const tricky = fc.constantFrom(
  'a',
  '"',
  '\\',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u2028',
  '\ud800',
  '\udfff',
  '😀',
  'é',
);
const text = (minLength: number) =>
  fc.oneof(
    fc.string({ unit: 'binary', minLength, maxLength: 40 }),
    fc.string({ unit: tricky, minLength, maxLength: 12 }),
  );
const anyText = text(0);
const someText = text(1);
const address = fc.oneof(fc.ipV4(), fc.ipV6());
const port = fc.oneof(fc.integer({ min: 0, max: 65535 }), fc.integer({ min: 0, max: 65535 }).map(String));
const extras = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['__proto__', 'constructor'].includes(k)),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);
const time = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 19).replace(/-/g, '/').replace('T', ' '));

const firewallInput = fc
  .record(
    {
      threat_name: someText,
      threatid: someText,
      src: address,
      dst: address,
      proto: anyText,
      subcategory_of_app: anyText,
      thr_category: anyText,
      app: anyText,
      time_received: time,
      sport: port,
      dport: port,
      severity: fc.constantFrom('critical', 'high', 'medium', 'low', 'informational', 'odd "one"'),
    },
    // Every field but severity, as the schema requires.
    { requiredKeys: [...firewallRecordSchema.required] },
  )
  .chain((r) => extras.map((x) => ({ ...x, ...r })));

const genericInput = fc.record({
  source_ip: address,
  destination_ip: address,
  destination_port: port,
  protocol: anyText,
  threat: someText,
  criticality: fc.integer({ min: 0, max: 4 }),
});

const context = fc.record({
  sensor: fc.stringMatching(/^[a-z][a-z0-9._-]{0,20}$/),
  remoteAddr: address,
  timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'Australia/Lord_Howe'),
  repaired: fc.boolean(),
});

function ctxOf(c: {
  sensor: string;
  remoteAddr: string;
  timezone: string;
  repaired: boolean;
}): ReceiptContext {
  return {
    ...c,
    id: newRecordId,
    receivedAt: new Date().toISOString(),
    rules: config.firewall,
    ascii: false,
    plainStrings: false,
  };
}

test("property: a built record's stored line is exactly JSON.stringify of it, with and without a dedupe key", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        firewallInput.map((input) => ({ endpoint: 'firewall' as const, input })),
        genericInput.map((input) => ({ endpoint: 'generic' as const, input })),
      ),
      context,
      fc.option(fc.string({ maxLength: 22 }), { nil: undefined }),
      ({ endpoint, input }, c, key) => {
        const record =
          endpoint === 'firewall'
            ? buildFirewallRecord(input as FirewallRecordInput, ctxOf(c))
            : buildGenericRecord(input as GenericRecordInput, ctxOf(c));
        assert.equal(storedLine(record), JSON.stringify(record));
        assert.equal(originalJson(record), JSON.stringify(input));
        if (key !== undefined) record.dedupe_key = key;
        assert.equal(storedLine(record), JSON.stringify(record));
        assert.deepEqual(JSON.parse(storedLine(record)), JSON.parse(JSON.stringify(record)));
        // With the sender's own text of the record kept (spaces between its tokens): the same value, one line.
        const canonical = JSON.stringify(record);
        record.keepSentText(JSON.stringify(input, null, 1).replace(/\n/g, ' '), false);
        const line = storedLine(record);
        assert.deepEqual(JSON.parse(line), JSON.parse(canonical));
        assert.equal(line.includes('\n'), false);
      },
    ),
    { numRuns: 500 },
  );
});

test('a record read back from a store keeps every field it has, in its order (store migrate)', () => {
  const line =
    '{"extra":1,"id":"x","received_at":"t","repaired":true,"original":{"a":1},"future_field":[1,2]}';
  const record = JSON.parse(line);
  assert.equal(storedLine(record), line);
});

test('every built record has one hidden class with fast properties (firewall, generic, repaired, kept text, dedupe key)', () => {
  // V8's own view of the objects: a record in dictionary mode, or a second shape, costs the hot path ~1.4 µs a
  // record to build and more to read back (see BuiltRecord).
  setFlagsFromString('--allow-natives-syntax');
  const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
  const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
    a: object,
    b: object,
  ) => boolean;
  const ctx = ctxOf({ sensor: 's', remoteAddr: '192.0.2.1', timezone: 'Europe/Berlin', repaired: false });
  const fw = fc.sample(firewallInput, { numRuns: 1, seed: 1 })[0] as FirewallRecordInput;
  const gen = fc.sample(genericInput, { numRuns: 1, seed: 1 })[0] as GenericRecordInput;
  const plain = buildFirewallRecord(fw, ctx);
  const keyed = buildFirewallRecord(fw, ctx);
  keyed.keepSentText(JSON.stringify(fw), true);
  keyed.dedupe_key = 'AAAAAAAAAAAAAAAAAAAAAA';
  originalJson(keyed);
  const repaired = buildFirewallRecord(fw, { ...ctx, repaired: true });
  const generic = buildGenericRecord(gen, { ...ctx, ascii: true, plainStrings: true });
  generic.keepSentText(JSON.stringify(gen), false);
  for (const r of [plain, keyed, repaired, generic]) {
    assert.equal(hasFastProperties(r), true);
    assert.equal(haveSameMap(r, plain), true);
  }
});

test("property: from bodies as received (raw, or with non-ASCII escaped), lines are JSON.stringify's and encodeLines their UTF-8", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        firewallInput.map((input) => ({ endpoint: 'firewall' as const, input })),
        genericInput.map((input) => ({ endpoint: 'generic' as const, input })),
      ),
      fc.boolean(),
      fc.boolean(),
      ({ endpoint, input }, escapeNonAscii, asciiName) => {
        let body = JSON.stringify(input);
        if (escapeNonAscii)
          body = body.replace(
            /[\u0080-\uffff]/g,
            (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
          );
        let parsed: ReturnType<typeof parseJsonBody>;
        try {
          parsed = parseJsonBody(Buffer.from(body), false);
        } catch (error) {
          // The generators may make a key `__proto__` somewhere: such a body is refused (a 400), never stored.
          assert.equal((error as { code?: string }).code, 'INVALID_JSON');
          assert.match(body, /"__proto__"|"constructor"/);
          return;
        }
        const ctx = {
          ...ctxOf({ sensor: 's', remoteAddr: '192.0.2.1', timezone: 'UTC', repaired: false }),
          ascii: parsed.ascii && asciiName,
          plainStrings: !parsed.escapes,
        };
        const record =
          endpoint === 'firewall'
            ? buildFirewallRecord(parsed.value as FirewallRecordInput, ctx)
            : buildGenericRecord(parsed.value as GenericRecordInput, ctx);
        if (parsed.recordTexts !== null)
          record.keepSentText(parsed.recordTexts[0] as string, parsed.textsCanonical);
        const second =
          endpoint === 'firewall'
            ? buildFirewallRecord(parsed.value as FirewallRecordInput, ctx)
            : buildGenericRecord(parsed.value as GenericRecordInput, ctx);
        // Quoted as they are or escaped, the strings make exactly JSON.stringify's line.
        assert.equal(storedLine(second), JSON.stringify(second));
        assert.deepEqual(
          encodeLines([record, second]),
          Buffer.from(`${storedLine(record)}\n${storedLine(second)}\n`, 'utf8'),
        );
      },
    ),
    { numRuns: 500 },
  );
});

test("property: an enriched record's line is JSON.stringify of it, its AS names quoted as they are only when they may be", () => {
  fc.assert(
    fc.property(
      firewallInput,
      context,
      fc.tuple(anyText, anyText, fc.boolean(), fc.option(anyText, { nil: undefined })),
      (input, c, [srcOrg, dstOrg, country, replaced]) => {
        const record = buildFirewallRecord(input as FirewallRecordInput, ctxOf(c));
        // Told plain when the shipped table would say so (ASCII that JSON does not escape).
        const plain = (s: string) => /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/.test(s);
        record.setEnrichment('src', country ? 'US' : undefined, 15169, srcOrg, plain(srcOrg));
        record.setEnrichment('dst', undefined, 3320, dstOrg, plain(dstOrg));
        assert.equal(storedLine(record), JSON.stringify(record));
        assert.equal(encodeLines([record]).toString('utf8'), `${JSON.stringify(record)}\n`);
        // A field changed after it was set is quoted as any string.
        if (replaced !== undefined) record.src_as_org = replaced;
        assert.equal(storedLine(record), JSON.stringify(record));
      },
    ),
    { numRuns: 500 },
  );
});
