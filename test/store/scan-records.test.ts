// scan(since) for the files backend: streams forward, visits records received since the instant, and skips
// whole segments whose UTC day ended before it by their name, without reading them.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { createFileRecordReader } from '../../src/store/files/read-records.js';
import { segmentFileName, utcDay } from '../../src/store/files/segments.js';
import { parseStoredRecord } from '../../src/store/record-shape.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { record } from './contract.js';

const line = (threat: string, at: number) =>
  `${JSON.stringify(record({ threat, received_at: new Date(at).toISOString(), original: { threat: 'é'.repeat(50) } }))}\n`;

test('scan skips segments of days before since by name and reads the rest in order, torn tail excluded', async (t) => {
  const dataDir = makeTempDir(t);
  const dir = join(dataDir, 'threats');
  mkdirSync(dir);
  const now = Date.now();
  const today = utcDay(now);
  // A record of today in a segment named for 2020: only the name can keep scan from visiting it.
  writeFileSync(join(dir, segmentFileName('20200101', 1)), line('in-an-old-day', now));
  const many = Array.from({ length: 5000 }, (_, i) => line(`t${i}`, now - 5000 + i)).join('');
  writeFileSync(join(dir, segmentFileName(today, 1)), line('too-old', now - 3_600_000) + many);
  writeFileSync(join(dir, segmentFileName(today, 2)), `${line('last', now)}{"id":"torn`);
  const seen: string[] = [];
  await createFileRecordReader(dataDir).scan(now - 10_000, (r) => seen.push(r.threat));
  assert.deepEqual(seen, [...Array.from({ length: 5000 }, (_, i) => `t${i}`), 'last']);

  const stop = new AbortController();
  stop.abort();
  const none: string[] = [];
  await createFileRecordReader(dataDir).scan(0, (r) => none.push(r.threat), stop.signal);
  assert.deepEqual(none, []);
});

test('property: the scan visits what parsing every line and keeping those received since would, wherever reads cut the lines', async (t) => {
  const dataDir = makeTempDir(t);
  const dir = join(dataDir, 'threats');
  mkdirSync(dir);
  const since = Date.now() - 60_000;
  const today = utcDay(Date.now());
  // Times about `since` in the writer's form and others Date.parse reads; lines that are no records; lines long
  // enough that the 1 MiB reads end inside them at places that move from run to run.
  const time = fc.oneof(
    fc.integer({ min: -2000, max: 2000 }).map((d) => new Date(since + d).toISOString()),
    fc.integer({ min: -2000, max: 2000 }).map((d) => new Date(since + d).toUTCString()),
    fc.constantFrom(
      '2026-13-01T00:00:00.000Z',
      '',
      'é',
      '9999-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
    ),
  );
  const entry = fc.oneof(
    { weight: 8, arbitrary: fc.record({ time, pad: fc.nat(120_000), escaped: fc.boolean() }) },
    fc.constantFrom(
      '',
      'garbage',
      '{"id":"x","received_at":"',
      '{"id":"a\\"b","received_at":"2099-01-01T00:00:00.000Z"}',
    ),
  );
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(entry, { minLength: 1, maxLength: 40 }), async (entries) => {
      const file = join(dir, segmentFileName(today, ++run));
      const expected: string[] = [];
      const lines = entries.map((e, i) => {
        if (typeof e === 'string') return e;
        const threat = `t${i}`;
        const text = JSON.stringify(
          record({
            threat,
            received_at: e.time,
            original: { threat, pad: (e.escaped ? '"é' : 'é').repeat(e.pad) },
          }),
        );
        const parsed = parseStoredRecord(text);
        if (parsed && Date.parse(parsed.received_at) >= since) expected.push(threat);
        return text;
      });
      writeFileSync(file, `${lines.join('\n')}\n`);
      const seen: string[] = [];
      await createFileRecordReader(dataDir).scan(since, (r) => seen.push(r.threat));
      rmSync(file);
      assert.deepEqual(seen, expected);
    }),
    { numRuns: 25 },
  );
});
