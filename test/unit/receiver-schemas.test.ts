// The receivers' configuration fragments: valid JSON schema (ajv, strict), a description on every key, the
// defaults filled in, typos refused, and every worked example of docs/outputs.md accepted by its fragment.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { elasticsearchOutputSchema } from '../../src/outputs/receivers/elasticsearch-receiver.js';
import { emailOutputSchema } from '../../src/outputs/receivers/email-receiver.js';
import { splunkHecOutputSchema } from '../../src/outputs/receivers/splunk-hec-receiver.js';
import { syslogOutputSchema } from '../../src/outputs/receivers/syslog-schema.js';

const fragments = {
  syslog: syslogOutputSchema,
  splunk_hec: splunkHecOutputSchema,
  elasticsearch: elasticsearchOutputSchema,
  email: emailOutputSchema,
};

/** One output's schema as the outputs schema will have it: the keys every output has are not ours to check here. */
function outputSchema(type: keyof typeof fragments) {
  const fragment = fragments[type];
  return {
    type: 'object',
    additionalProperties: false,
    required: ['type', ...fragment.required],
    properties: { ...fragment.properties, type: { const: type }, filter: { type: 'object' } },
  };
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true });

test('every key has a description, and each fragment compiles under strict mode', () => {
  for (const [type, fragment] of Object.entries(fragments)) {
    for (const [key, property] of Object.entries(fragment.properties))
      assert.ok(
        typeof (property as { description?: unknown }).description === 'string',
        `${type}.${key}: no description`,
      );
    for (const key of fragment.required)
      assert.ok(key in fragment.properties, `${type}: ${key} required, not defined`);
    ajv.compile(outputSchema(type as keyof typeof fragments));
  }
});

test("docs/outputs.md's worked examples are valid, and get the defaults", () => {
  const markdown = readFileSync(new URL('../../docs/outputs.md', import.meta.url), 'utf8');
  const blocks = [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] as string);
  assert.equal(blocks.length, 4);
  const seen = new Set<string>();
  for (const block of blocks) {
    const outputs = JSON.parse(`{${block}}`).outputs as Record<string, { type: keyof typeof fragments }>;
    for (const [name, output] of Object.entries(outputs)) {
      const validate = ajv.compile(outputSchema(output.type));
      assert.ok(validate(output), `${name}: ${ajv.errorsText(validate.errors)}`);
      seen.add(output.type);
    }
  }
  assert.deepEqual([...seen].sort(), Object.keys(fragments).sort());
});

test('defaults are filled in, and an unknown key (a typo) is refused', () => {
  const validate = ajv.compile(outputSchema('syslog'));
  const output: Record<string, unknown> = { type: 'syslog', host: 'siem.example' };
  assert.ok(validate(output));
  assert.deepEqual(output, {
    type: 'syslog',
    host: 'siem.example',
    port: null,
    transport: 'tls',
    format: 'json',
    facility: 'local0',
    ca: null,
    hostname: null,
    sdId: 'threatcol@32473',
    connectTimeoutMs: 10_000,
    writeTimeoutMs: 30_000,
  });
  assert.ok(!validate({ type: 'syslog', host: 'siem.example', fromat: 'cef' }));
  assert.ok(!validate({ type: 'syslog', host: 'siem.example', sdId: 'bad id' }));
  const email = ajv.compile(outputSchema('email'));
  assert.ok(!email({ type: 'email', host: 'smtp.example', from: 'a@b.c', to: [] }), 'at least one recipient');
  const hec = ajv.compile(outputSchema('splunk_hec'));
  assert.ok(!hec({ type: 'splunk_hec', url: 'ftp://x', tokenFile: '/t' }), 'http(s) URLs only');
});
