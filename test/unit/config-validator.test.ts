// The configuration's validator is compiled from the schema at build time, one file per top-level key: the
// committed files must be current, and judge every configuration as ajv compiling the whole schema does.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { listConfigKeys } from '../../src/config/config-keys.js';
import validateConfig from '../../src/config/config-validator.js';
import { configSchema } from '../../src/config/schema.js';
import { configAjv, renderConfigValidator } from '../tools/config-validator.js';

test('src/config/config-validator*.ts is compiled from the current schema (else: npm run docs)', () => {
  const rendered = renderConfigValidator();
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const committed = readdirSync(`${root}src/config`)
    .filter((f) => f.startsWith('config-validator'))
    .map((f) => `src/config/${f}`);
  assert.deepEqual(committed.sort(), [...rendered.keys()].sort(), 'stale: run npm run docs');
  for (const [file, text] of rendered)
    assert.ok(readFileSync(`${root}${file}`, 'utf8') === text, `${file} is stale: run npm run docs`);
});

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
