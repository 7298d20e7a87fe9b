// A `splunk_hec` output end to end through the real binary (DESIGN 13), with indexer acknowledgement, against a
// loopback server answering as Splunk's HEC documents: batches taken only once their ackId is acknowledged,
// invalid events dead-lettered, a 503 retried, every other record indexed with its id as `threatcol_id`.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startHecServer } from '../helpers/hec-server.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { serveWithOutputs } from './output-serve.js';

const RECORDS = 1500;

test('splunk_hec with useAck: acknowledged batches, invalid events dead-lettered, a 503 retried', async (t) => {
  const dir = makeTempDir(t);
  const token = '6f1c0c4e-2b1d-4f7a-9d55-threatcol';
  const hec = await startHecServer(t, token);
  hec.ackAfterPolls = 2;
  hec.failNext.push({ status: 503, code: 9, text: 'Server is busy', retryAfter: '1' });
  writeFileSync(join(dir, 'hec.token'), `${token}\n`);
  writeFileSync(join(dir, 'hec-ca.pem'), hec.ca);
  const { post, deadLetters, testOutput } = await serveWithOutputs(t, dir, {
    siem: {
      type: 'splunk_hec',
      url: hec.url,
      ca: join(dir, 'hec-ca.pem'),
      tokenFile: join(dir, 'hec.token'),
      index: 'threats',
      ackPollIntervalMs: 100,
      batch: { maxRecords: 250, maxWaitMs: 100 },
      retryMaxMs: 1000,
      startAt: 'oldest',
    },
  });
  await post(
    Array.from({ length: RECORDS }, (_, i) =>
      genericRecord({ threat: i % 400 === 11 ? `INVALID-EVENT ${i}` : `t${i}`, criticality: i % 5 }),
    ),
  );
  const stored = readStored(dir);
  assert.equal(stored.length, RECORDS);
  const invalid = new Set(
    stored.filter((r) => String(r.threat).startsWith('INVALID-EVENT')).map((r) => r.id as string),
  );
  const indexed = () => new Set(hec.events.map((e) => e.fields?.threatcol_id));
  await until(
    async () =>
      stored.every((r) => indexed().has(r.id as string) || invalid.has(r.id as string)) &&
      (await deadLetters('siem')).length >= invalid.size,
    60_000,
    'every record indexed or dead-lettered',
  );
  const got = indexed();
  for (const id of invalid) assert.ok(!got.has(id), 'an invalid event is never indexed');
  const letters = await deadLetters('siem');
  assert.deepEqual(letters.map((l) => l.record.id).sort(), [...invalid].sort());
  assert.ok(
    letters.every((l) => /code 6/.test(l.answer)),
    letters[0]?.answer ?? 'no dead letter',
  );
  assert.ok(hec.events.every((e) => e.index === 'threats' && e.sourcetype === 'threatcol:threat'));
  assert.ok(
    hec.events.every((e) => e.event.id === e.fields?.threatcol_id),
    'the id is the record id',
  );
  assert.ok(
    hec.requests.some((r) => r.path.startsWith('/services/collector/ack')),
    'acks were polled',
  );
  const duplicates = hec.events.length - got.size;
  t.diagnostic(`indexed ${got.size}, events ${hec.events.length}, duplicates ${duplicates}`);

  const sampleId = await testOutput('siem');
  assert.ok(indexed().has(sampleId));
});
