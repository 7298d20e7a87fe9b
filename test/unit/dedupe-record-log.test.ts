// The dedupe wrapper over the real files record log: a claim is settled on every path of the inner append (the
// wrapper has no promise of its own to do it), so a refused delivery's keys are free for its retry and a stored
// one's retry is answered with the first id. A claim left held would make the retry wait forever.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { newRecordId } from '../../src/records/record-id.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { localDedupeIndex } from '../../src/store/files/dedupe/dedupe-index.js';
import { withDedupe } from '../../src/store/files/dedupe/dedupe-record-log.js';
import { DedupeWindow } from '../../src/store/files/dedupe/dedupe-window.js';
import { FileRecordLog } from '../../src/store/files/file-record-log.js';

const logger = pino({ level: 'silent' });
const record = (n: number) => ({ id: newRecordId(), original: { n } }) as unknown as StoredRecord;

test('a refused append releases its keys; a stored one is found by its retry', {
  timeout: 20_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'threatcol-dedupe-log-'));
  try {
    // Room for one queued record: an append of two is refused (503) before it is queued.
    const inner = new FileRecordLog({
      dataDir,
      segmentMaxBytes: 1 << 20,
      queueMaxRecords: 1,
      queueMaxBytes: 1 << 20,
      logger,
    });
    await inner.open();
    const log = withDedupe(
      inner,
      localDedupeIndex(new DedupeWindow(120_000), () => 1_000, logger),
    );
    await assert.rejects(log.append([record(1), record(2)], { dedupeKeys: ['k1', 'k2'] }), {
      code: 'UNAVAILABLE',
    });

    const first = record(1);
    const stored = await log.append([first], { dedupeKeys: ['k1'] });
    assert.deepEqual(stored, { ids: [first.id], duplicates: 0 });
    const retry = await log.append([record(1)], { dedupeKeys: ['k1'] });
    assert.deepEqual(retry, { ids: [first.id], duplicates: 1 });
    await log.close();

    const [segment] = readdirSync(join(dataDir, 'threats')).filter((f) => f.endsWith('.ndjson'));
    const lines = readFileSync(join(dataDir, 'threats', segment as string), 'utf8')
      .trim()
      .split('\n');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      [{ id: first.id, original: { n: 1 }, dedupe_key: 'k1' }],
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
