// What the record log says of batches it could not write (store/files/file-record-log.ts): each answered 503, the
// first of each kind logged at once with its cause, then at most a line per interval, the last of a burst with
// how many more there were.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { newRecordId } from '../../src/records/record-id.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { nodeFileOps } from '../../src/store/file-ops.js';
import { FileRecordLog } from '../../src/store/files/file-record-log.js';

const record = (n: number) => ({ id: newRecordId(), original: { n } }) as unknown as StoredRecord;
const eio = (what: string) => Object.assign(new Error(`EIO: i/o error, ${what}`), { code: 'EIO' });

test('failed writes and opens: 503 each, one line per kind at once, then one saying how many more', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'threatcol-log-failures-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const lines: { msg: string; err?: { message: string }; suppressed?: number }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  let failWrites = false;
  let failOpens = false;
  const log = new FileRecordLog({
    dataDir,
    // A segment a batch: an append after a stored one opens the next segment.
    segmentMaxBytes: 1,
    queueMaxRecords: 100,
    queueMaxBytes: 1 << 20,
    logger: pino({ level: 'error' }, sink),
    failureLogIntervalMs: 300,
    fileOps: {
      ...nodeFileOps,
      async writev(fd, buffers) {
        if (failWrites) throw eio('write');
        return nodeFileOps.writev(fd, buffers);
      },
      async open(path, flags, mode) {
        if (failOpens && path.endsWith('.ndjson')) throw eio(`open '${path}'`);
        return nodeFileOps.open(path, flags, mode);
      },
    },
  });
  await log.open();
  await log.append([record(0)]);
  const written = lines.length;
  failWrites = true;
  for (let n = 1; n <= 5; n++) await assert.rejects(log.append([record(n)]), { code: 'UNAVAILABLE' });
  const writes = () => lines.slice(written).filter((l) => l.msg.startsWith('writing records failed'));
  assert.equal(writes().length, 1, 'one line for the burst so far');
  assert.match(writes()[0]?.err?.message ?? '', /EIO: i\/o error, write/);
  // Another kind in the same interval: its own first line at once.
  failWrites = false;
  await log.append([record(9)]);
  failOpens = true;
  // The next append rotates (a full segment): its open fails, and each after it (no segment is open).
  for (let n = 0; n < 3; n++)
    await assert.rejects(log.append([record(10 + n), record(20 + n)]), { code: 'UNAVAILABLE' });
  const opens = () => lines.filter((l) => l.msg.startsWith('opening a segment failed'));
  assert.equal(opens().length, 1);
  // After the interval: the count of the rest, each kind once.
  await sleep(450);
  assert.deepEqual(
    writes().map((l) => [l.msg, l.suppressed]),
    [
      ['writing records failed; answered 503', undefined],
      ['writing records failed; answered 503 (4 more)', 4],
    ],
  );
  assert.deepEqual(
    opens().map((l) => l.suppressed),
    [undefined, 2],
  );
  failOpens = false;
  assert.ok((await log.append([record(30)])).ids.length === 1, 'stores again');
  await log.close();
});
