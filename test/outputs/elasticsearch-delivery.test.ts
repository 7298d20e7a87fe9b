// An `elasticsearch` output end to end through the real binary (DESIGN 13), against a loopback `_bulk` server
// answering as Elasticsearch documents: mapping errors dead-lettered (and listed by `outputs dead-letter`),
// per-item 429s and whole 503s retried, everything else created once under its record id.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startBulkServer } from '../helpers/bulk-server.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until, untilDrained } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';

const RECORDS = 3000;

test('elasticsearch: refused items dead-lettered, 429 items and 503 answers retried, all others created', async (t) => {
  const dir = makeTempDir(t);
  const apiKey = 'dGhyZWF0Y29sOnNlY3JldA==';
  writeFileSync(join(dir, 'es.apikey'), `${apiKey}\n`);
  const bulk = await startBulkServer(t, `ApiKey ${apiKey}`);
  t.after(() => bulk.close());
  writeFileSync(join(dir, 'es-ca.pem'), bulk.ca);
  // Down (503) until the records are stored, so the 429s can be aimed at ids the store gave.
  for (let i = 0; i < 10_000; i++) bulk.failNext.push({ status: 503, retryAfter: '1' });
  const { serve, post, deadLetters, testOutput } = await serveWithOutputs(t, dir, {
    elastic: {
      type: 'elasticsearch',
      url: bulk.url,
      ca: join(dir, 'es-ca.pem'),
      tokenFile: join(dir, 'es.apikey'),
      index: 'threats',
      batch: { maxRecords: 250, maxWaitMs: 100 },
      retryMaxMs: 1000,
      startAt: 'oldest',
    },
  });
  await post(
    Array.from({ length: RECORDS }, (_, i) =>
      genericRecord({ threat: i % 300 === 7 ? `MAPPING-ERROR ${i}` : `t${i}`, criticality: i % 5 }),
    ),
  );
  const stored = readStored(dir);
  assert.equal(stored.length, RECORDS);
  const refused = new Set(
    stored.filter((r) => String(r.threat).startsWith('MAPPING-ERROR')).map((r) => r.id as string),
  );
  const rejected = stored.filter((_, i) => i % 50 === 3).map((r) => r.id as string);
  for (const id of rejected) bulk.rejectTimes.set(id, 2);
  await until(
    () => serve.logs.some((l) => l.msg === 'output delivery failed; retrying'),
    30_000,
    'the output retries while the receiver answers 503',
  );
  bulk.failNext.length = 0;

  await untilDrained(
    () => RECORDS - refused.size - bulk.docs.size,
    OUTPUTS_THREAD_MS,
    'every record not refused is created',
  );
  await until(
    async () => (await deadLetters('elastic')).length >= refused.size,
    30_000,
    'dead letters written',
  );

  const created = new Set([...bulk.docs.keys()].map((k) => k.replace(/^threats\//, '')));
  assert.equal(created.size, RECORDS - refused.size);
  for (const r of stored) {
    const id = r.id as string;
    assert.equal(created.has(id), !refused.has(id), `record ${id}: created unless refused`);
  }
  const letters = await deadLetters('elastic');
  assert.deepEqual(letters.map((l) => l.record.id).sort(), [...refused].sort());
  assert.ok(
    letters.every((l) => /^400 mapper_parsing_exception/.test(l.answer)),
    letters[0]?.answer ?? 'no dead letter',
  );
  assert.ok(rejected.every((id) => bulk.rejectTimes.get(id) === 0 && created.has(id)));
  assert.ok(bulk.requests.every((r) => r.headers.authorization === `ApiKey ${apiKey}`));
  const doc = bulk.docs.get(`threats/${stored[0]?.id}`);
  assert.equal(doc?.['@timestamp'], stored[0]?.received_at, 'data streams get @timestamp');

  const sampleId = await testOutput('elastic');
  assert.ok(bulk.docs.has(`threats/${sampleId}`));
});
