// A files output feed filling a batch waits for more records until its deadline (output-feed.ts). When the clock
// has passed the deadline during its pause (a busy box, a late timer, the clock stepped forward), it hands the
// batch over without arming a timer for the negative time left: Node printed a TimeoutNegativeWarning to the
// collector's stderr (the journal) for each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openTestFeed } from '../helpers/file-feed.js';
import { recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('a batch whose deadline passed during its pause is handed over without a negative timer', async (t) => {
  const dataDir = makeTempDir(t);
  const spec = { ageMinutes: 5, src: '198.51.100.1', dst: '198.51.100.2', threat: 'scan', sensor: 'fw1' };
  writeDaySegments(dataDir, recordsFromSpecs([{ ...spec, criticality: 3 }], Date.now()));
  // The feed's clock steps a minute forward once the batch has started filling.
  let stepAt = Number.POSITIVE_INFINITY;
  const now = () => Date.now() + (Date.now() >= stepAt ? 60_000 : 0);
  const feed = await openTestFeed(dataDir, 'fill', { now });
  t.after(() => feed.close());
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));

  stepAt = Date.now() + 10;
  const batch = await feed.next({
    maxRecords: 100,
    maxBytes: 1 << 20,
    waitMs: 1000,
    signal: new AbortController().signal,
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(batch.records.length, 1, 'the record is handed over');
  assert.deepEqual(warnings, [], 'no warning printed');
});
