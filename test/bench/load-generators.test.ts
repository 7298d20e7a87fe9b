// The benchmark's load generators send distinct records: the bodies are all different and valid, and against
// a real serve with retry dedupe on (the default) every answered request left new records in the store, no
// two of them alike. A generator that repeated bodies would leave far fewer records than answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { validateBody } from '../../src/schemas/validate-records.js';
import { addSensorCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { runAutocannon } from './load-autocannon.js';
import { runReconnect } from './load-reconnect.js';
import { payloadBodies } from './payloads.js';

let serve: ServeProcess;
let dataDir: string;
let headers: Record<string, string>;

before(async () => {
  dataDir = makeTempDir();
  const key = await addSensorCli(dataDir, 'bench');
  headers = { 'Content-Type': 'application/json', 'X-AUTH_KEY': key, 'X-SENSOR_NAME': 'bench' };
  serve = await spawnServe(dataDir, [], {
    env: { THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '0', THREATCOL_RATE_LIMIT_BYTES_PER_SECOND: '0' },
  });
});

after(async () => {
  await serve.stop();
});

test('payload bodies: 20,000 firewall bodies and 200 arrays of 100 generic records, all different, all valid', () => {
  const firewall = payloadBodies({ kind: 'firewall' });
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    const body = firewall().toString();
    seen.add(body);
    if (i % 1000 === 0) assert.equal(validateBody('firewall', JSON.parse(body), 1).ok, true, body);
  }
  assert.equal(seen.size, 20_000);
  const generic = payloadBodies({ kind: 'generic', records: 100 });
  const records = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const array = JSON.parse(generic().toString()) as unknown[];
    assert.equal(validateBody('generic', array, 1000).ok, true);
    for (const r of array) records.add(JSON.stringify(r));
  }
  assert.equal(records.size, 20_000);
});

test('autocannon and the reconnecting client: every answer is a new record in the store', async () => {
  const url = (path: string) => `${serve.url}${path}`;
  const firewall = await runAutocannon(
    { url: url('/firewall'), headers, connections: 4, duration: 1 },
    { kind: 'firewall' },
    1,
  );
  const generic = await runAutocannon(
    { url: url('/generic'), headers, connections: 2, duration: 1 },
    { kind: 'generic', records: 100 },
    100,
  );
  const reconnect = await runReconnect({
    url: serve.url,
    path: '/firewall',
    headers,
    payload: { kind: 'firewall' },
    connections: 2,
    durationSec: 1,
    resume: true,
    maxVersion: 'TLSv1.2',
  });
  for (const r of [firewall, generic, reconnect]) {
    assert.equal(r.non2xx + r.errors, 0, JSON.stringify(r));
    assert.ok(r.requests > 0, JSON.stringify(r));
  }
  const stored = readStored(dataDir);
  const count = (endpoint: string) => stored.filter((r) => r.endpoint === endpoint).length;
  // autocannon stops counting with a request in flight on each connection: the collector may store those.
  const answered = firewall.requests + reconnect.requests;
  assert.ok(
    count('firewall') >= answered && count('firewall') <= answered + 4,
    `${count('firewall')} ${answered}`,
  );
  assert.ok(count('generic') >= generic.records && count('generic') <= generic.records + 2 * 100);
  assert.equal(new Set(stored.map((r) => JSON.stringify(r.original))).size, stored.length);
});
