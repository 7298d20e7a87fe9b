// The configuration's validator is compiled from the schema at build time, one file per top-level key: it judges
// every configuration as ajv compiling the whole schema does (generated-code.test.ts checks it is current).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { configAjv } from '../../packaging/generate/config-validator.js';
import { listConfigKeys } from '../../src/config/config-keys.js';
import { configSchema } from '../../src/config/schema.js';
import validateConfig from '../../src/generated/config-validator.js';

const whole = configAjv().compile(configSchema);
const split = validateConfig as unknown as typeof whole;

/** Both validators on copies of `input`: the verdict, the errors in order, and the input with defaults filled. */
function assertSameJudgement(input: unknown): void {
  const a = structuredClone(input);
  const b = structuredClone(input);
  const expected = whole(a);
  assert.equal(split(b), expected, JSON.stringify(input));
  assert.deepEqual(split.errors ?? null, whole.errors ?? null, JSON.stringify(input));
  assert.deepEqual(b, a, JSON.stringify(input));
}

const leaves = listConfigKeys();

function withPath(
  target: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
): Record<string, unknown> {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== 'object' || Array.isArray(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path.at(-1) as string] = value;
  return target;
}

test('the split validator judges chosen configurations as the whole schema does', () => {
  const defaults = {};
  whole(defaults);
  const cases: unknown[] = [
    {},
    defaults,
    5,
    null,
    [],
    'x',
    { nosuch: 1 },
    { server: 5, nosuch: {}, tls: [] },
  ];
  for (const leaf of leaves) {
    for (const value of ['x', 7, -1, 1.5, true, null, [], {}]) cases.push(withPath({}, leaf.path, value));
  }
  for (const section of Object.keys(configSchema.properties)) cases.push({ [section]: { nosuch: 1 } });
  cases.push(
    { outputs: { siem: { type: 'webhook', url: 'https://siem.example/hook' } } },
    { outputs: { siem: { type: 'syslog', url: 'tcp://127.0.0.1:514', nosuch: 1 } } },
    { outputs: { 'bad name!': { type: 'email' } }, server: { port: 70000 }, log: { level: 'loud' } },
  );
  for (const input of cases) assertSameJudgement(input);
});

test('the split validator judges random configurations as the whole schema does', () => {
  const path = fc.oneof(
    fc.constantFrom(...leaves.map((l) => l.path)),
    fc.tuple(fc.constantFrom(...Object.keys(configSchema.properties)), fc.string({ maxLength: 8 })),
    fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 3 }),
  );
  const config = fc
    .array(fc.tuple(path, fc.jsonValue({ maxDepth: 2 })), { maxLength: 8 })
    .map((entries) => entries.reduce((c, [p, v]) => withPath(c, p, v), {} as Record<string, unknown>));
  fc.assert(
    fc.property(config, (c) => assertSameJudgement(c)),
    { numRuns: 2000 },
  );
});
