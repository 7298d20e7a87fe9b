// The dashboard's follower after a failed read: it starts again later and later (each start counts 24 hours
// again), and from the first delay once a start succeeded. A real files store whose reads fail through FileOps.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { createLiveFeed } from '../../src/admin/live-feed.js';
import { loadConfig } from '../../src/config/load-config.js';
import { type FileOps, nodeFileOps } from '../../src/store/file-ops.js';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { openStore } from '../../src/store/open-store.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('live feed: a store that keeps failing is tried again after 5 s, doubling to 5 min; a success resets it', async (t) => {
  const dataDir = makeTempDir(t);
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(threatsDir(dataDir), `${utcDay(Date.now())}-000001.ndjson`),
    `${JSON.stringify(storedGenericRecord())}\n`,
  );
  let broken = true;
  const ops: FileOps = {
    ...nodeFileOps,
    read: (fd, buffer, offset, length, position) =>
      broken
        ? Promise.reject(Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }))
        : nodeFileOps.read(fd, buffer, offset, length, position),
  };
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger, fileOps: ops });
  const delays: number[] = [];
  let retry = () => {};
  const feed = createLiveFeed({
    reader: store.reader,
    logger,
    pollIntervalMs: 20,
    schedule: (again, ms) => {
      delays.push(ms);
      retry = again;
    },
  });
  t.after(async () => {
    feed.stop();
    await store.close();
  });
  feed.start();
  for (let n = 1; n <= 8; n++) {
    await until(() => delays.length === n, 20_000, `failure ${n}`);
    if (n < 8) retry();
  }
  assert.deepEqual(delays, [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  broken = false;
  retry();
  await until(() => feed.warm, 20_000, 'the 24 hours counted');
  assert.deepEqual(
    feed.counts.summary().lastDay.reduce((a, b) => a + b),
    1,
  );
  // The follower's next read fails: counted from the first delay again.
  broken = true;
  await until(() => delays.length === 9, 20_000, 'the failure after a success');
  assert.equal(delays[8], 5000);
});
