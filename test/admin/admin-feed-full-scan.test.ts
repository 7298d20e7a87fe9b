// Review finding (cost, not correctness): every GET /api/feed reads the store backwards until it has 200
// records matching its filter (dashboard-routes.ts serveFeed -> reader.readRecent({limit: 200, filter})).
// A filter that matches little (a quiet sensor, "critical only") reads the whole retained store, per tab,
// per filter change and per EventSource reconnect, with no cap on how many run at once, and the records
// that arrive meanwhile are buffered without bound (`pending`). docs/operations.md: "All tabs together cost one reader
// of the store". This test measures one such open on ~100 MB of stored records against an unfiltered one,
// and asserts the filtered open is not much slower (it fails on today's code).
import { strict as assert } from 'node:assert';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function timeToReady(url: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        if (text.includes('event: ready') || text.includes('event: failure')) {
          resolve(performance.now() - started);
          req.destroy();
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('admin /api/feed: a filter matching nothing does not read the whole store', async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'fw1');
  await addSensorCli(dataDir, 'quiet');
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  // The day before yesterday: all of it lies more than 24 h back whatever the time of day (yesterday's first
  // 8 hours did not before 08:20 UTC, and the test then failed on the feed's own 24 h read).
  const now = Date.now();
  const day = now - 2 * 86_400_000;
  const fd = openSync(join(threatsDir(dataDir), `${utcDay(day)}-000001.ndjson`), 'a', 0o640);
  const dayStart = Date.parse(`${new Date(day).toISOString().slice(0, 10)}T00:00:00Z`);
  const lines: string[] = [];
  for (let i = 0; i < 300_000; i++) {
    const at = new Date(dayStart + i * 100).toISOString();
    const id = `019a0000-${String(i).padStart(4, '0').slice(-4)}-7000-8000-${String(i).padStart(12, '0')}`;
    lines.push(
      JSON.stringify(
        storedGenericRecord({
          id,
          received_at: at,
          threat: `SSH brute force ${i}`,
          original: { source_ip: '203.0.113.5', destination_ip: '2001:db8::1', note: 'x'.repeat(100) },
        }),
      ),
    );
    if (lines.length === 10_000) {
      writeSync(fd, `${lines.join('\n')}\n`);
      lines.length = 0;
    }
  }
  closeSync(fd);
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop('SIGKILL'));
  assert.ok(serve.adminUrl);
  const unfiltered = await timeToReady(`${serve.adminUrl}/api/feed`);
  const quiet = await timeToReady(`${serve.adminUrl}/api/feed?sensor=quiet`);
  const quiet4 = await Promise.all(
    Array.from({ length: 4 }, () => timeToReady(`${serve.adminUrl}/api/feed?sensor=quiet`)),
  );
  const report = `ready after: unfiltered ${unfiltered.toFixed(0)} ms, sensor=quiet ${quiet.toFixed(0)} ms, 4 at once ${quiet4.map((m) => m.toFixed(0)).join('/')} ms`;
  t.diagnostic(report);
  assert.ok(quiet < Math.max(10 * unfiltered, 500), report);
});
