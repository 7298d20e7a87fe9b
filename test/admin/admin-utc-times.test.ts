// Times asked about without a zone are UTC on the admin API whatever the daemon's zone (docs/admin-api.md): a
// collector serving under TZ=Asia/Tokyo finds a record of ten minutes ago in a window of an hour either side of
// now written without `Z`, in the look-up (/api/search), a source's view (/api/source) and the feed's interval.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { spawnServe } from '../helpers/cli.js';
import { recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SRC = '198.51.100.23';

function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    })
      .on('error', reject)
      .end();
  });
}

/** The ids of the records an event stream sends before its `ready` (those stored in its interval). */
function feedIds(url: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        if (!/^event: ready$/m.test(text)) return;
        req.destroy();
        const ids = [...text.matchAll(/^event: records\ndata: (.*)$/gm)].flatMap((m) =>
          (JSON.parse(m[1] as string) as { id: string }[]).map((r) => r.id),
        );
        resolve(ids);
      });
    });
    req.on('error', reject).end();
  });
}

test('admin API: a window without a zone is UTC when the daemon runs under TZ=Asia/Tokyo', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  const [record] = recordsFromSpecs(
    [{ src: SRC, dst: '192.0.2.1', threat: 'Port Scan', sensor: 'fw-a', criticality: 2, ageMinutes: 10 }],
    now,
  );
  assert.ok(record);
  writeDaySegments(dataDir, [record]);
  const serve = await spawnServe(dataDir, [], { env: { TZ: 'Asia/Tokyo' } });
  t.after(() => serve.stop('SIGKILL'));
  assert.ok(serve.adminUrl);
  // An hour either side of now, as a person types it: no zone. Read in Tokyo time it would be 8-10 hours ago.
  const from = new Date(now - 3_600_000).toISOString().slice(0, 19);
  const to = new Date(now + 3_600_000).toISOString().slice(0, 19);

  const search = await getJson(`${serve.adminUrl}/api/search?src=${SRC}&since=${from}&until=${to}`);
  assert.equal(search.status, 200, JSON.stringify(search.body));
  assert.deepEqual(
    (search.body.records as { id: string }[]).map((r) => r.id),
    [record.id],
  );
  const source = await getJson(`${serve.adminUrl}/api/source?address=${SRC}&since=${from}&until=${to}`);
  assert.equal(source.status, 200, JSON.stringify(source.body));
  assert.equal(source.body.records, 1);
  assert.deepEqual(await feedIds(`${serve.adminUrl}/api/feed?from=${from}&to=${to}`), [record.id]);
});
