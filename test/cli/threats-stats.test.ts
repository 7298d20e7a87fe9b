// `threatcol threats stats` on records stored by the real collector: every --by, --sensor, --top, --since,
// --json and the table, through the compiled CLI.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { runCli } from '../helpers/cli.js';
import { post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import {
  firewallRecord,
  genericRecord,
  readStoreText,
  recordsFromSpecs,
  writeDaySegments,
} from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

interface Stats {
  total: number;
  distinct: number;
  by: string;
  sensor: string | null;
  rows: { key: string; count: number }[];
  other: number;
}

test('threats stats: counts by each field over the window, filters, --top, table and JSON', async (t) => {
  const s = await startTestServer(t);
  const fwKey = await s.addSensor('fw-1');
  const idsKey = await s.addSensor('ids-1');
  const fw = { agent: s.agent, sensor: 'fw-1', key: fwKey };
  const ids = { agent: s.agent, sensor: 'ids-1', key: idsKey };
  assert.equal(
    (
      await post(
        s.url,
        '/firewall',
        [1, 2, 3].map((n) => firewallRecord({ sport: 50000 + n })),
        fw,
      )
    ).status,
    200,
  );
  assert.equal((await post(s.url, '/generic', [genericRecord(), genericRecord()], ids)).status, 200);
  const scan = genericRecord({ threat: 'Port scan', criticality: 1, source_ip: '198.51.100.7' });
  assert.equal((await post(s.url, '/generic', scan, ids)).status, 200);
  // A record from three days ago, in that day's segment: outside the default 24 h, inside 7d.
  const line = readStoreText(s.dataDir).split('\n')[0] as string;
  const old = new Date(Date.now() - 3 * 86_400_000);
  const oldLine = line.replace(/"received_at":"[^"]+"/, `"received_at":"${old.toISOString()}"`);
  const day = old.toISOString().slice(0, 10).replaceAll('-', '');
  writeFileSync(join(s.dataDir, 'threats', `${day}-000001.ndjson`), `${oldLine}\n`);

  const stats = async (...args: string[]): Promise<Stats> => {
    const r = await runCli(['threats', 'stats', '--data-dir', s.dataDir, '--json', ...args]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Stats;
  };
  const rows = (st: Stats) => Object.fromEntries(st.rows.map((r) => [r.key, r.count]));

  const bySensor = await stats('--by', 'sensor');
  assert.equal(bySensor.total, 6);
  assert.deepEqual(bySensor.rows, [
    { key: 'fw-1', count: 3 },
    { key: 'ids-1', count: 3 },
  ]);
  assert.deepEqual(rows(await stats('--by', 'criticality')), { '3': 5, '1': 1 });
  assert.deepEqual(
    (await stats('--by', 'criticality')).rows.map((r) => r.key),
    ['3', '1'],
  );
  assert.deepEqual(rows(await stats('--by', 'endpoint')), { firewall: 3, generic: 3 });
  assert.deepEqual(rows(await stats('--by', 'threat')), {
    'EICAR Test File Detection': 3,
    'SSH brute force': 2,
    'Port scan': 1,
  });
  assert.deepEqual(rows(await stats('--by', 'src_ip')), {
    '192.0.2.10': 3,
    '203.0.113.5': 2,
    '198.51.100.7': 1,
  });
  const threatDefault = await stats();
  assert.equal(threatDefault.by, 'threat');

  const onlyIds = await stats('--sensor', 'ids-1', '--by', 'threat');
  assert.equal(onlyIds.sensor, 'ids-1');
  assert.deepEqual(rows(onlyIds), { 'SSH brute force': 2, 'Port scan': 1 });
  const top1 = await stats('--by', 'src_ip', '--top', '1');
  assert.deepEqual(top1.rows, [{ key: '192.0.2.10', count: 3 }]);
  assert.equal(top1.other, 3);
  assert.equal(top1.distinct, 3);
  assert.equal((await stats('--since', '7d', '--by', 'sensor')).total, 7);
  assert.equal((await stats('--since', new Date(Date.now() + 60_000).toISOString())).total, 0);

  const table = await runCli(['threats', 'stats', '--data-dir', s.dataDir, '--by', 'criticality']);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^6 records, \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ to /);
  assert.match(table.stdout, /^CRITICALITY +RECORDS +SHARE$/m);
  assert.match(table.stdout, /^3 high +5 +83\.3%$/m);
  assert.match(table.stdout, /^1 low +1 +16\.7%$/m);

  const bad = await runCli(['threats', 'stats', '--data-dir', s.dataDir, '--by', 'dst_ip']);
  assert.equal(bad.code, 64);
  const badTop = await runCli(['threats', 'stats', '--data-dir', s.dataDir, '--top', 'x']);
  assert.equal(badTop.code, 64);
  assert.match(badTop.stderr, /--top/);
});

test('threats stats --by src_asn: one row per AS, named as its newest record names it', async (t) => {
  const dataDir = makeTempDir(t);
  const spec = { src: '8.8.8.8', dst: '203.0.113.1', threat: 'Port Scan', sensor: 'fw-a', criticality: 2 };
  const [oldest, older, newer, other] = recordsFromSpecs(
    [
      { ...spec, ageMinutes: 40 },
      { ...spec, ageMinutes: 30 },
      { ...spec, ageMinutes: 20 },
      { ...spec, src: '1.1.1.1', ageMinutes: 10 },
    ],
    Date.now(),
  ) as [StoredRecord, StoredRecord, StoredRecord, StoredRecord];
  // The AS database was replaced meanwhile: the same AS under an older name, and once with no name at all. The
  // newest is stored first (another worker's segment is read in its own order).
  writeDaySegments(dataDir, [
    Object.assign(newer, { src_country: 'US', src_asn: 15169, src_as_org: 'Google LLC' }),
    Object.assign(oldest, { src_country: 'US', src_asn: 15169, src_as_org: 'Google Inc.' }),
    Object.assign(older, { src_country: 'US', src_asn: 15169 }),
    Object.assign(other, { src_country: 'AU', src_asn: 13335, src_as_org: 'Cloudflare, Inc.' }),
  ]);
  const r = await runCli(['threats', 'stats', '--by', 'src_asn', '--json', '--data-dir', dataDir]);
  assert.equal(r.code, 0, r.stderr);
  const stats = JSON.parse(r.stdout) as { rows: unknown[]; distinct: number };
  assert.deepEqual(stats.rows, [
    { key: 'AS15169 Google LLC', count: 3 },
    { key: 'AS13335 Cloudflare, Inc.', count: 1 },
  ]);
  assert.equal(stats.distinct, 2);
});

test('threats stats counts no record received after the until it states', async (t) => {
  const dataDir = makeTempDir(t);
  const spec = { src: '198.51.100.7', dst: '192.0.2.1', sensor: 'fw-a', criticality: 2 };
  // A record received ten minutes ago, and one stamped ten minutes ahead (a collector whose clock ran ahead, or
  // one received while the command read): the second lies after the window's end.
  writeDaySegments(
    dataDir,
    recordsFromSpecs(
      [
        { ...spec, threat: 'Past', ageMinutes: 10 },
        { ...spec, threat: 'Future', ageMinutes: -10 },
      ],
      Date.now(),
    ),
  );
  const r = await runCli(['threats', 'stats', '--json', '--data-dir', dataDir]);
  assert.equal(r.code, 0, r.stderr);
  const stats = JSON.parse(r.stdout) as Stats & { until: string };
  assert.deepEqual(stats.rows, [{ key: 'Past', count: 1 }]);
  assert.equal(stats.total, 1);
});
