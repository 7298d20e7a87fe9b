// Review finding: the dedupe window's rebuild at start (dedupe-rebuild.ts segmentsReaching) walks
// listSegments() backwards and stops at the first segment that starts before the window. With --workers the
// list is sorted day, then worker, then sequence: the last worker's segment comes last, and when it started
// before the window (any collector whose segments are older than 2 min, i.e. every quiet one) worker 1's
// segments are never read, so a retry of a record worker 1 stored just before a restart is stored again.
import { strict as assert } from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { threatsDir, utcDay } from '../../src/store/files/segments.js';
import { postFresh, workerOf } from '../cluster/support.js';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { firewallRecord, storedGenericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

test('workers 2: after a restart, a retry of a record worker 1 stored just before is still a duplicate', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  // Worker 2's current segment started 30 minutes ago (a quiet collector: one record then).
  const now = Date.now();
  const old = Math.max(
    now - 30 * 60_000,
    Date.parse(`${new Date(now).toISOString().slice(0, 10)}T00:00:01Z`),
  );
  mkdirSync(threatsDir(dataDir), { recursive: true, mode: 0o700 });
  const oldLine = storedGenericRecord({
    id: '00000000-0000-7000-8000-000000000001',
    received_at: new Date(old).toISOString(),
    threat: 'old',
    original: {},
  });
  writeFileSync(
    join(threatsDir(dataDir), `${utcDay(now)}-w2-000001.ndjson`),
    `${JSON.stringify(oldLine)}\n`,
    {
      mode: 0o640,
    },
  );

  let serve = await spawnServe(dataDir, ['--workers', '2']);
  t.after(() => serve.stop('SIGKILL'));
  // A record that worker 1 stored (fresh connections: the round robin alternates).
  let sent: Record<string, unknown> | null = null;
  for (let i = 0; i < 20 && sent === null; i++) {
    const record = firewallRecord({ threat_name: `review-rebuild-${i}` });
    const reply = await postFresh(serve.url, '/firewall', record, { sensor: 'fw1', key });
    assert.equal(reply.status, 200, reply.body);
    if (workerOf(dataDir, `review-rebuild-${i}`) === 1) sent = record;
  }
  assert.ok(sent, 'worker 1 stored one of the records');
  const stopped = await serve.stop('SIGTERM');
  assert.equal(stopped.code, 0);

  serve = await spawnServe(dataDir, ['--workers', '2']);
  const retry = await postFresh(serve.url, '/firewall', sent, { sensor: 'fw1', key });
  assert.equal(retry.status, 200, retry.body);
  const rebuilt = serve.logs.filter((l) => l.msg === 'dedupe window rebuilt from the newest segments');
  assert.equal(
    (JSON.parse(retry.body) as { duplicates?: number }).duplicates,
    1,
    `the retry was stored again; rebuild logs: ${JSON.stringify(rebuilt.map((l) => l.keys))}`,
  );
});
