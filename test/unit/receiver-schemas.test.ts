// The receivers' configuration keys as the configuration loader checks them: a description on every key, the
// type's defaults filled in, typos and a missing required key refused naming the output and the key, every
// worked example of docs/outputs.md accepted, and an email output's batching unless the operator set `batch`.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { OUTPUT_TYPE_KEYS, outputKeyRows } from '../../src/config/outputs-schema.js';
import { EMAIL_BATCHING } from '../../src/outputs/receivers/email-receiver.js';
import { makeTempDir } from '../helpers/temp-dir.js';

type Outputs = Record<string, Record<string, unknown>>;

function load(t: Parameters<typeof makeTempDir>[0], outputs: Outputs) {
  const path = join(makeTempDir(t), 'config.json');
  writeFileSync(path, JSON.stringify({ outputs }));
  return loadConfig({ configPath: path, env: {} }).config.outputs as Record<string, Record<string, unknown>>;
}

function refusal(t: Parameters<typeof makeTempDir>[0], outputs: Outputs): string {
  try {
    load(t, outputs);
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'CONFIG_INVALID');
    return (error as Error).message;
  }
  assert.fail('the configuration was accepted');
}

test('every key has a description, and the common keys are not defined again by a type', () => {
  for (const row of outputKeyRows()) assert.ok(row.description.length > 0, `${row.type}.${row.key}`);
  for (const [type, keys] of Object.entries(OUTPUT_TYPE_KEYS)) {
    for (const key of [
      'ca',
      'tokenFile',
      'passwordFile',
      'connectTimeoutMs',
      'headersTimeoutMs',
      'apiKeyFile',
    ])
      assert.ok(!(key in keys), `${type}.${key} duplicates a common key`);
  }
});

test("docs/outputs.md's worked examples load, and get their type's defaults", (t) => {
  const markdown = readFileSync(new URL('../../docs/outputs.md', import.meta.url), 'utf8');
  const blocks = [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] as string);
  assert.ok(blocks.length >= 4);
  const seen = new Set<string>();
  for (const block of blocks) {
    // A whole configuration (`{ "outputs": … }`) or its `"outputs": …` fragment.
    const outputs = JSON.parse(block.trimStart().startsWith('{') ? block : `{${block}}`).outputs as Outputs;
    for (const [name, output] of Object.entries(load(t, outputs))) {
      assert.equal(output.type, outputs[name]?.type);
      seen.add(output.type as string);
    }
  }
  assert.deepEqual([...seen].sort(), ['elasticsearch', 'email', 'splunk_hec', 'syslog', 'webhook']);
  const { siem } = load(t, { siem: { type: 'syslog', host: 'siem.example' } });
  assert.deepEqual(
    { ...siem, filter: undefined, batch: undefined },
    {
      ...siem,
      filter: undefined,
      batch: undefined,
      port: null,
      transport: 'tls',
      format: 'json',
      facility: 'local0',
      hostname: null,
      sdId: 'threatcol@32473',
      ca: null,
      timeoutMs: 30_000,
    },
  );
});

test('a typo or a missing required key is refused, naming the output and the key', (t) => {
  assert.match(
    refusal(t, { siem: { type: 'syslog', host: 'siem.example', fromat: 'cef' } }),
    /outputs\.siem\.fromat: unknown key of the syslog output "siem" \(did you mean format\?\)/,
  );
  assert.match(refusal(t, { siem: { type: 'syslog', host: 'x', sdId: 'bad id' } }), /outputs\.siem\.sdId/);
  assert.match(refusal(t, { siem: { type: 'syslog', format: 'cef' } }), /outputs\.siem.*host/);
  assert.match(refusal(t, { hec: { type: 'splunk_hec', tokenFile: '/t' } }), /outputs\.hec.*url/);
  assert.match(refusal(t, { hec: { type: 'splunk_hec', url: 'ftp://x' } }), /outputs\.hec\.url/);
  assert.match(refusal(t, { es: { type: 'elasticsearch', index: 'x' } }), /outputs\.es.*url/);
  assert.match(refusal(t, { mail: { type: 'email', host: 'smtp', from: 'a@b.c' } }), /outputs\.mail.*to/);
  assert.match(
    refusal(t, { mail: { type: 'email', host: 'smtp', from: 'a@b.c', to: [] } }),
    /outputs\.mail\.to/,
  );
});

test('an email output batches a flood into one digest unless the operator set batch', (t) => {
  const { mail, paced } = load(t, {
    mail: { type: 'email', host: 'smtp', from: 'a@b.c', to: ['x@y.z'] },
    paced: { type: 'email', host: 'smtp', from: 'a@b.c', to: ['x@y.z'], batch: { maxRecords: 20 } },
  });
  assert.deepEqual(mail?.batch, { maxBytes: 1_048_576, ...EMAIL_BATCHING });
  assert.deepEqual(paced?.batch, {
    maxBytes: 1_048_576,
    maxWaitMs: EMAIL_BATCHING.maxWaitMs,
    maxRecords: 20,
  });
  assert.equal(mail?.minIntervalMs, 300_000);
});
