// scan(since) for the files backend: streams forward, visits records received since the instant, and skips
// whole segments whose UTC day ended before it by their name, without reading them.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createFileRecordReader } from '../../src/store/files/read-records.js';
import { segmentFileName, utcDay } from '../../src/store/files/segments.js';
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
