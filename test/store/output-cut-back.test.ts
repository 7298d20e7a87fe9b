// A segment cut back under an output's cursor (a power cut lost what the cursor had passed, or the writer took
// back a failed write) and then appended to: the feed resumes from the first record after the last one it
// passed, so the records appended there are not skipped.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { openStore } from '../../src/store/open-store.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { record } from './contract.js';

test('files: a segment cut back under the cursor and appended to: the appended records are handed over', async (t) => {
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  let log = await store.openRecordLog();
  await log.append([record({ threat: 'a' }), record({ threat: 'b' }), record({ threat: 'c' })]);
  let feed = await store.outputs.openFeed({ name: 'hook', startAt: 0 });
  const signal = () => AbortSignal.timeout(5000);
  const limits = { maxRecords: 10, maxBytes: 1_048_576, waitMs: 20 };
  const first = await feed.next({ ...limits, signal: signal() });
  assert.deepEqual(
    first.records.map((r) => r.record.threat),
    ['a', 'b', 'c'],
  );
  await first.ack();
  await feed.close();
  await log.close();

  // The last line ('c', passed by the cursor) is lost, as a power cut before its fdatasync would lose it.
  const threats = join(dataDir, 'threats');
  const [segment] = readdirSync(threats);
  const path = join(threats, segment as string);
  const text = readFileSync(path, 'utf8');
  truncateSync(path, text.lastIndexOf('\n', text.length - 2) + 1);
  log = await store.openRecordLog();
  t.after(() => log.close());
  await log.append([
    record({ threat: 'd' }),
    record({ threat: 'e' }),
    record({ threat: 'f' }),
    record({ threat: 'g' }),
  ]);
  assert.ok(
    readFileSync(path, 'utf8').length >= text.length,
    'the appended records reach past the old cursor',
  );

  feed = await store.outputs.openFeed({ name: 'hook' });
  t.after(() => feed.close());
  const next = await feed.next({ ...limits, signal: signal() });
  assert.deepEqual(
    next.records.map((r) => r.record.threat),
    ['d', 'e', 'f', 'g'],
  );
  assert.ok(logs.some((l) => String(l.msg).startsWith('a segment was cut back under the output position')));
});
