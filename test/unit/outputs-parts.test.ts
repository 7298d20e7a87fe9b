// The pure parts of the outputs: their configuration (errors naming output and key, defaults), the generated
// key table, the backoff bounds, the slack message and the idempotency key.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { renderOutputKeysTable } from '../../src/config/describe-outputs.js';
import { loadConfig } from '../../src/config/load-config.js';
import { parseMaxLag } from '../../src/config/outputs-schema.js';
import { ThreatcolError } from '../../src/errors.js';
import { createBackoff } from '../../src/outputs/backoff.js';
import { isLoopbackHost, parseRetryAfter } from '../../src/outputs/receivers/http-post.js';
import { slackMessage } from '../../src/outputs/receivers/slack-message.js';
import { idempotencyKey } from '../../src/outputs/receivers/webhook.js';
import { outputMatcher } from '../../src/outputs/record-match.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function problemsOf(t: { after(fn: () => unknown): void }, outputs: unknown): string[] {
  const path = join(makeTempDir(t), 'config.json');
  writeFileSync(path, JSON.stringify({ outputs }));
  try {
    loadConfig({ configPath: path, env: {} });
  } catch (error) {
    assert.ok(error instanceof ThreatcolError);
    assert.equal(error.code, 'CONFIG_INVALID');
    return (error.details ?? []).map((d) => `${d.path}: ${d.message}`);
  }
  return [];
}

test('an output with an unknown key, type or name is refused naming the output and the key', (t) => {
  assert.deepEqual(problemsOf(t, { oncall: { type: 'webhook', url: 'https://h/x', fromat: 'slack' } }), [
    'outputs.oncall.fromat: unknown key of the webhook output "oncall" (did you mean format?)',
  ]);
  assert.deepEqual(
    problemsOf(t, { a: { type: 'webhook', url: 'https://h/x', filter: { minCritcality: 4 } } }),
    ['outputs.a.filter.minCritcality: unknown key of the webhook output "a" (did you mean minCriticality?)'],
  );
  assert.match(
    problemsOf(t, { s: { type: 'splunk' } })[0] ?? '',
    /^outputs\.s\.type: must be one of "syslog"/,
  );
  assert.deepEqual(problemsOf(t, { 'bad name': { type: 'webhook', url: 'https://h' } }), [
    'outputs.bad name: names may hold only A-Z a-z 0-9 _ - (1 to 64)',
  ]);
  assert.match(
    problemsOf(t, { w: { type: 'webhook' } }).join(),
    /outputs\.w: must have required property 'url'/,
  );
  assert.match(
    problemsOf(t, { w: { type: 'webhook', url: 'ftp://h' } }).join(),
    /outputs\.w\.url: must match/,
  );
  assert.match(
    problemsOf(t, { w: { type: 'webhook', url: 'https://h', maxLag: '7 days' } }).join(),
    /maxLag/,
  );
  // slackMaxRecords belongs to webhook only.
  assert.match(
    problemsOf(t, { s: { type: 'syslog', slackMaxRecords: 3 } }).join(),
    /outputs\.s\.slackMaxRecords: unknown key/,
  );
});

test('a valid output gets every default; maxLag reads as an age or a size', (t) => {
  const path = join(makeTempDir(t), 'config.json');
  writeFileSync(
    path,
    JSON.stringify({
      outputs: { hook: { type: 'webhook', url: 'https://h/x', filter: { minCriticality: 4 } } },
    }),
  );
  const { config } = loadConfig({ configPath: path, env: {} });
  const hook = config.outputs.hook;
  assert.equal(hook?.enabled, true);
  assert.deepEqual(hook?.filter, { minCriticality: 4, sensors: null, endpoints: null });
  assert.deepEqual(hook?.batch, { maxRecords: 500, maxBytes: 1_048_576, maxWaitMs: 1000 });
  assert.equal(hook?.startAt, 'now');
  assert.deepEqual(parseMaxLag('7d'), { ms: 7 * 86_400_000 });
  assert.deepEqual(parseMaxLag(10_000_000), { bytes: 10_000_000 });
  assert.equal(parseMaxLag(null), null);
});

test("docs/configuration.md's output-keys table is generated from the schema", () => {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/configuration.md', import.meta.url)), 'utf8');
  const start = doc.indexOf('<!-- output-keys:start -->\n') + '<!-- output-keys:start -->\n'.length;
  const end = doc.indexOf('\n<!-- output-keys:end -->');
  assert.equal(doc.slice(start, end), renderOutputKeysTable(), 'run npm run docs');
});

test('backoff doubles from its base, never past its cap, honours a longer Retry-After up to the cap', () => {
  const backoff = createBackoff({ baseMs: 1000, capMs: 8000, random: () => 1 });
  assert.deepEqual(
    Array.from({ length: 6 }, () => backoff.next()),
    [1000, 2000, 4000, 8000, 8000, 8000],
  );
  const low = createBackoff({ baseMs: 1000, capMs: 8000, random: () => 0 });
  assert.equal(low.next(), 500, 'half of it is fixed: never a zero wait');
  assert.equal(low.next(5000), 5000);
  assert.equal(low.next(60_000), 8000);
  low.reset();
  assert.equal(low.attempts, 0);
});

test('the filter takes criticality, sensors and endpoints together', () => {
  const match = outputMatcher({ minCriticality: 3, sensors: ['fw1'], endpoints: ['generic'] });
  const r = (o: Record<string, unknown>) => storedGenericRecord(o) as unknown as StoredRecord;
  assert.equal(match(r({ criticality: 3, sensor: 'fw1' })), true);
  assert.equal(match(r({ criticality: 2, sensor: 'fw1' })), false);
  assert.equal(match(r({ criticality: 4, sensor: 'fw2' })), false);
  assert.equal(match(r({ criticality: 4, sensor: 'fw1', endpoint: 'firewall' })), false);
});

test('the slack message counts by criticality and quotes the first records; the key follows the ids', () => {
  const batch = [4, 4, 2].map((criticality, i) => {
    const record = storedGenericRecord({ criticality, threat: `x${i}` }) as unknown as StoredRecord;
    return { id: record.id, line: JSON.stringify(record), head: record, record };
  });
  const text = slackMessage(batch, 2);
  assert.match(text, /^threatcol: 3 threat records \(2 × criticality 4, 1 × criticality 2\)/);
  assert.match(text, /\[4\] x0/);
  assert.match(text, /\[4\] x1/);
  assert.doesNotMatch(text, /x2/);
  assert.match(text, /… and 1 more$/);
  assert.equal(idempotencyKey(batch), idempotencyKey([...batch]));
  assert.notEqual(idempotencyKey(batch), idempotencyKey(batch.slice(1)));
});

test('Retry-After in seconds or as a date; loopback hosts need no plain-http warning', () => {
  assert.equal(parseRetryAfter('7', 0), 7000);
  assert.equal(parseRetryAfter(new Date(61_000).toUTCString(), 1000), 60_000);
  assert.equal(parseRetryAfter('soon', 0), null);
  assert.equal(parseRetryAfter(undefined, 0), null);
  for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1'])
    assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['example.com', '10.0.0.1', '[2001:db8::1]', '128.0.0.1'])
    assert.equal(isLoopbackHost(host), false, host);
});
