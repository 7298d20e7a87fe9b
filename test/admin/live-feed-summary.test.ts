// The dashboard's summary costs one computation a second whatever the number of requests: a record followed
// in between shows in the next second's summary, not before. A real files store and the real follower.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { createLiveFeed } from '../../src/admin/live-feed.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { openStore } from '../../src/store/open-store.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('live feed: the summary is computed at most once a second', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  let clock = Date.now();
  const segment = join(threatsDir(dataDir), `${utcDay(clock)}-000001.ndjson`);
  const store = (at: number, criticality: number) =>
    appendFileSync(
      segment,
      `${JSON.stringify(storedGenericRecord({ received_at: new Date(at).toISOString(), criticality }))}\n`,
    );
  store(clock - 60_000, 1);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const logger = pino({ level: 'silent' });
  const files = await openStore(config, { dataDir, logger });
  const feed = createLiveFeed({ reader: files.reader, logger, now: () => clock, pollIntervalMs: 20 });
  t.after(async () => {
    feed.stop();
    await files.close();
  });
  const followed: StoredRecord[] = [];
  feed.subscribe((records) => followed.push(...records));
  feed.start();
  await until(() => feed.warm, 20_000, 'the 24 hours counted');
  const first = feed.summary();
  assert.deepEqual(first.lastHour, [0, 1, 0, 0, 0]);
  store(clock, 4); // stamped after the follower started: counted by it, not by the scan
  await until(() => followed.length === 1, 20_000, 'the new record followed');
  clock += 999;
  assert.equal(feed.summary(), first, 'computed again within the second');
  clock += 1;
  assert.deepEqual(feed.summary().lastHour, [0, 1, 0, 0, 1]);
});
