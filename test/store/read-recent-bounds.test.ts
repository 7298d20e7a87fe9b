// The files reader's look-back bound holds for any segment: a region without a newline (a torn or hostile
// file) is not read, and held in memory, past `maxBytes` (the store contract checks the bound on records).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type FileOps, nodeFileOps } from '../../src/store/file-ops.js';
import { createFileRecordReader } from '../../src/store/files/read-records.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const line = (id: string, threat: string) =>
  `${JSON.stringify(storedGenericRecord({ id, received_at: new Date().toISOString(), sensor: 's', criticality: 1, threat }))}\n`;

test('files: readRecent with maxBytes stops inside a newline-free region instead of reading it whole', async (t) => {
  const dataDir = makeTempDir(t);
  const dir = join(dataDir, 'threats');
  mkdirSync(dir);
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  const junk = 'x'.repeat(8 * 1024 * 1024);
  writeFileSync(join(dir, `${day}-000001.ndjson`), `${line('1', 'old')}${junk}\n${line('2', 'new')}`);
  let bytes = 0;
  const ops: FileOps = {
    ...nodeFileOps,
    read: async (fd, buffer, offset, length, position) => {
      const n = await nodeFileOps.read(fd, buffer, offset, length, position);
      bytes += n;
      return n;
    },
  };
  const reader = createFileRecordReader(dataDir, undefined, ops);
  const { records } = await reader.readRecent({ limit: 10, maxBytes: 1024 * 1024 });
  assert.deepEqual(
    records.map((r) => r.record.threat),
    ['new'],
  );
  assert.ok(bytes <= 1024 * 1024 + 256 * 1024, `${bytes} bytes read for a budget of 1 MiB`);
  // Without a budget the same read goes through the region to the older record.
  const all = await createFileRecordReader(dataDir).readRecent({ limit: 10 });
  assert.deepEqual(
    all.records.map((r) => r.record.threat),
    ['old', 'new'],
  );
});
