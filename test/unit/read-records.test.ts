// The record reader across a failed write: the writer truncates a batch back, then the file grows past the
// reader's cursor again; the new line must be read whole, not dropped as a fragment.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createFileRecordReader, type RecordLine } from '../../src/store/files/read-records.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const line = (threat: string) =>
  `${JSON.stringify(storedGenericRecord({ id: threat, received_at: '2026-11-21T10:00:00.000Z', sensor: 's', criticality: 1, threat }))}\n`;

test('following survives a truncation followed by regrowth past the cursor', async (t) => {
  const dataDir = makeTempDir(t);
  const dir = join(dataDir, 'threats');
  mkdirSync(dir);
  const file = join(dir, '20261121-000001.ndjson');
  writeFileSync(file, line('a'));
  const reader = createFileRecordReader(dataDir);
  const { cursor } = await reader.readRecent({ limit: 10 });
  const seen: string[] = [];
  const stop = new AbortController();
  let resolveSeen: () => void = () => {};
  const want = (ids: string[]) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`not read within 5 s: ${ids.join(', ')}; read ${seen.join(', ')}`)),
        5000,
      );
      resolveSeen = () => {
        if (ids.every((id) => seen.includes(id))) {
          clearTimeout(timer);
          resolve();
        }
      };
      resolveSeen();
    });
  const following = reader.follow(cursor, {
    signal: stop.signal,
    pollIntervalMs: 20,
    onRecords: (batch: RecordLine[]) => {
      for (const r of batch) seen.push(String(r.record.id));
      resolveSeen();
    },
  });
  // A batch the reader sees, which the writer then takes back (a failed write), ...
  appendFileSync(file, line('failed-batch'));
  await want(['failed-batch']);
  const boundary = line('a').length;
  truncateSync(file, boundary);
  // ... then a longer record written at once, crossing the reader's old cursor.
  appendFileSync(file, line(`after-${'x'.repeat(200)}`) + line('next'));
  try {
    await want([`after-${'x'.repeat(200)}`, 'next']);
  } finally {
    stop.abort();
    await following;
  }
  assert.deepEqual(seen, ['failed-batch', `after-${'x'.repeat(200)}`, 'next']);
});
