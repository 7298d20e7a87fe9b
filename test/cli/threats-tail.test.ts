// Black box: `threatcol threats tail` through the real binary, against a running serve and hand-made stores.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatRecordLine } from '../../src/cli/format-record.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { addSensorCli, BIN, cleanEnv, runCli, spawnServe, spawnTail } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let seq = 0;

function storedRecord(overrides: Partial<StoredRecord> = {}): StoredRecord {
  seq += 1;
  return {
    id: `rec-${String(seq).padStart(6, '0')}`,
    received_at: new Date().toISOString(),
    sensor: 'fw-a',
    endpoint: 'firewall',
    criticality: 2,
    severity: 'medium',
    criticality_source: 'severity',
    src_ip: '192.0.2.10',
    dst_ip: '198.51.100.20',
    src_port: 51234,
    dst_port: 443,
    protocol: 'tcp',
    threat: 'EICAR Test File Detection',
    threat_id: '86708',
    detected_at: new Date().toISOString(),
    remote_addr: '127.0.0.1',
    original: { note: 'x'.repeat(40) },
    ...overrides,
  };
}

const lineOf = (r: StoredRecord) => `${JSON.stringify(r)}\n`;

function makeStore(t: { after(fn: () => unknown): void }): { dataDir: string; threats: string } {
  const dataDir = makeTempDir(t);
  const threats = join(dataDir, 'threats');
  mkdirSync(threats, { recursive: true });
  return { dataDir, threats };
}

const ids = (lines: string[]) => lines.map((l) => (JSON.parse(l) as { id: string }).id);

test('tail prints the last records of a running serve, then each new one within a second', async (t) => {
  const dataDir = makeTempDir(t);
  const serve = await spawnServe(dataDir);
  t.after(() => serve.stop());
  const key = await addSensorCli(dataDir, 'fw-live');
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const send = async (threat: string) => {
    const r = await post(serve.url, '/generic', genericRecord({ threat }), { agent, sensor: 'fw-live', key });
    assert.equal(r.status, 200, r.text);
    return (r.json as { ids: string[] }).ids[0] as string;
  };
  let known: string[] = [];
  // The daemon notices the new sensor by itself; retry until it does.
  for (let i = 0; i < 50 && known.length === 0; i++) {
    const r = await post(serve.url, '/generic', genericRecord({ threat: 'first' }), {
      agent,
      sensor: 'fw-live',
      key,
    });
    if (r.status === 200) known = (r.json as { ids: string[] }).ids;
    else await new Promise((res) => setTimeout(res, 100));
  }
  known.push(await send('second'), await send('third'));

  const tail = spawnTail(t, ['--data-dir', dataDir, '-n', '2', '--json']);
  assert.deepEqual(ids(await tail.waitFor(2)), known.slice(1));
  const sentAt = Date.now();
  const id = await send('live one');
  // The wait is a hang guard; how soon a record shows is reported, not asserted (it measured the machine's load).
  const [, , live] = await tail.waitFor(3, 30_000);
  t.diagnostic(`the new record showed ${Date.now() - sentAt} ms after it was sent`);
  assert.equal(ids([live as string])[0], id);
  assert.equal((JSON.parse(live as string) as StoredRecord).threat, 'live one');

  tail.child.kill('SIGINT');
  assert.deepEqual(await tail.exited, { code: 0, signal: null });
  assert.equal(tail.stderr(), '');
});

test('tail follows serve across segment rotation without losing or repeating a record', async (t) => {
  const dataDir = makeTempDir(t);
  const serve = await spawnServe(dataDir, [], { env: { THREATCOL_STORE_SEGMENT_MAX_BYTES: '4096' } });
  t.after(() => serve.stop());
  const key = await addSensorCli(dataDir, 'fw-rot');
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const tail = spawnTail(t, ['--data-dir', dataDir, '-n', '0', '--json', '--no-follow']);
  assert.deepEqual(await tail.exited, { code: 0, signal: null });
  assert.deepEqual(tail.lines, []);

  const sent: string[] = [];
  const sendPair = async () => {
    const r = await post(serve.url, '/generic', [genericRecord(), genericRecord()], {
      agent,
      sensor: 'fw-rot',
      key,
    });
    if (r.status === 401 && sent.length === 0) {
      await new Promise((res) => setTimeout(res, 100)); // the daemon has not seen the new sensor yet
      return;
    }
    assert.equal(r.status, 200, r.text);
    sent.push(...(r.json as { ids: string[] }).ids);
  };
  while (sent.length === 0) await sendPair();
  // Two records already there, so seeing them tells that tail is following from here on.
  const follower = spawnTail(t, ['--data-dir', dataDir, '-n', '2', '--json']);
  await follower.waitFor(2);
  while (sent.length < 40) await sendPair();
  assert.deepEqual(ids(await follower.waitFor(40)), sent);
  const segments = readdirSync(join(dataDir, 'threats')).filter((f) => f.endsWith('.ndjson'));
  assert.ok(segments.length >= 3, `expected several segments, got ${segments.join(', ')}`);
  follower.child.kill('SIGINT');
  assert.equal((await follower.exited).code, 0);
  assert.equal(follower.lines.length, 40);
});

test('filters: sensor (repeatable), min criticality, endpoint, since; human output has no escape codes', async (t) => {
  const { dataDir, threats } = makeStore(t);
  const old = new Date(Date.now() - 3 * 3_600_000).toISOString();
  const recs = [
    storedRecord({ sensor: 'fw-a', criticality: 4, severity: 'critical', received_at: old }),
    storedRecord({ sensor: 'fw-b', criticality: 1, severity: 'low' }),
    storedRecord({
      sensor: 'ids-c',
      endpoint: 'generic',
      criticality: 3,
      severity: 'high',
      src_port: undefined,
      dst_ip: '2001:db8::1',
      dst_port: 22,
      threat: 'SSH brute force',
    }),
    storedRecord({ sensor: 'fw-a', criticality: 0, severity: 'informational' }),
    storedRecord({ sensor: 'fw-b', criticality: 3, severity: 'high', threat: 'evil\u001b[31m\nname' }),
  ];
  writeFileSync(join(threats, '20261120-000001.ndjson'), recs.slice(0, 2).map(lineOf).join(''));
  writeFileSync(join(threats, '20261121-000001.ndjson'), recs.slice(2).map(lineOf).join(''));
  const tail = (...args: string[]) =>
    runCli(['threats', 'tail', '--data-dir', dataDir, '--no-follow', ...args]);
  const idsOf = (stdout: string) => ids(stdout.split('\n').filter(Boolean));
  const idOf = (i: number) => (recs[i] as StoredRecord).id;

  const [all, bySensor, byCrit, byEndpoint, bySince, combined, limited, human] = await Promise.all([
    tail('--json', '-n', '100'),
    tail('--json', '--sensor', 'fw-a', '--sensor', 'ids-c'),
    tail('--json', '--min-criticality', '3'),
    tail('--json', '--endpoint', 'generic'),
    tail('--json', '--since', '1h'),
    tail('--json', '--sensor', 'fw-b', '--min-criticality', '2', '--endpoint', 'firewall'),
    tail('--json', '-n', '2', '--min-criticality', '1'),
    tail('-n', '2'),
  ]);
  assert.deepEqual(
    idsOf(all.stdout),
    recs.map((r) => r.id),
  );
  assert.deepEqual(idsOf(bySensor.stdout), [idOf(0), idOf(2), idOf(3)]);
  assert.deepEqual(idsOf(byCrit.stdout), [idOf(0), idOf(2), idOf(4)]);
  assert.deepEqual(idsOf(byEndpoint.stdout), [idOf(2)]);
  assert.deepEqual(idsOf(bySince.stdout), [idOf(1), idOf(2), idOf(3), idOf(4)]);
  assert.deepEqual(idsOf(combined.stdout), [idOf(4)]);
  assert.deepEqual(idsOf(limited.stdout), [idOf(2), idOf(4)]);
  // --json prints the stored lines exactly.
  assert.equal(all.stdout, recs.map(lineOf).join(''));

  assert.equal(human.code, 0, human.stderr);
  assert.ok(!human.stdout.includes('\u001b'), 'no escape codes for a non-terminal');
  const time = (r: StoredRecord) => `${r.received_at.slice(0, 19).replace('T', ' ')}Z`;
  assert.equal(
    human.stdout,
    `${time(recs[3] as StoredRecord)}  INFO      fw-a  192.0.2.10:51234 → 198.51.100.20:443 tcp  EICAR Test File Detection\n` +
      `${time(recs[4] as StoredRecord)}  HIGH      fw-b  192.0.2.10:51234 → 198.51.100.20:443 tcp  evil?[31m?name\n`,
  );

  const bad = await Promise.all([
    tail('--min-criticality', '5'),
    tail('--since', 'yesterday'),
    tail('-n', 'ten'),
    tail('--endpoint', 'relp'), // syslog is an endpoint now (docs/syslog.md)
  ]);
  for (const r of bad) {
    assert.equal(r.code, 64, r.stderr);
    assert.equal(r.stdout, '');
  }
});

test('human lines are coloured by criticality only when asked to (a terminal without NO_COLOR)', () => {
  const r = storedRecord({
    criticality: 4,
    severity: 'critical',
    dst_ip: '2001:db8::5',
    src_port: undefined,
  });
  const plain = formatRecordLine(r, false);
  assert.match(plain, /^\S+ \S+Z {2}CRITICAL {2}fw-a {2}192\.0\.2\.10 → \[2001:db8::5\]:443 tcp {2}EICAR/);
  assert.equal(formatRecordLine(r, true), `\u001b[1;31m${plain}\u001b[0m`);
  assert.ok(formatRecordLine({ ...r, criticality: 2 }, true).startsWith('\u001b[33m'));
});

test("human lines name an address's country and AS where the record has them (enrichment), and nothing where not", () => {
  const r = storedRecord({ src_ip: '8.8.8.8', src_country: 'US', src_asn: 15169, src_as_org: 'Google LLC' });
  assert.match(
    formatRecordLine(r, false),
    /^\S+ \S+Z {2}MEDIUM {4}fw-a {2}8\.8\.8\.8:51234 \(US AS15169\) → 198\.51\.100\.20:443 tcp {2}EICAR/,
  );
  // A destination of its own, a country alone, an AS alone; a hostile value is cleaned as every field is.
  const both = storedRecord({ src_asn: 64500, dst_country: 'DE', dst_asn: 3320 });
  assert.match(
    formatRecordLine(both, false),
    /192\.0\.2\.10:51234 \(AS64500\) → 198\.51\.100\.20:443 \(DE AS3320\) tcp/,
  );
  const hostile = storedRecord({ src_country: '\u001b[2J' } as never);
  assert.match(formatRecordLine(hostile, false), /192\.0\.2\.10:51234 \(\?\[2J\) → /);
  assert.doesNotMatch(formatRecordLine(storedRecord(), false), /\(/);
});

test('a torn last line is never printed; it appears once, complete, when the writer finishes it', async (t) => {
  const { dataDir, threats } = makeStore(t);
  const seg = join(threats, '20261121-000001.ndjson');
  const [a, b, c, d] = [storedRecord(), storedRecord(), storedRecord(), storedRecord()];
  const torn = lineOf(c);
  writeFileSync(seg, lineOf(a) + lineOf(b) + torn.slice(0, 25));

  const once = await runCli(['threats', 'tail', '--data-dir', dataDir, '--json', '--no-follow']);
  assert.equal(once.code, 0, once.stderr);
  assert.deepEqual(ids(once.stdout.split('\n').filter(Boolean)), [a.id, b.id]);

  const tail = spawnTail(t, ['--data-dir', dataDir, '--json']);
  assert.deepEqual(ids(await tail.waitFor(2)), [a.id, b.id]);
  appendFileSync(seg, torn.slice(25, 60));
  appendFileSync(seg, torn.slice(60) + lineOf(d));
  assert.deepEqual(ids(await tail.waitFor(4)), [a.id, b.id, c.id, d.id]);
  tail.child.kill('SIGINT');
  assert.equal((await tail.exited).code, 0);
  assert.equal(tail.lines.length, 4);
});

test('following survives retention deleting segments and moves on to new ones', async (t) => {
  const { dataDir, threats } = makeStore(t);
  const first = join(threats, '20261121-000001.ndjson');
  const [a, b, c] = [storedRecord(), storedRecord(), storedRecord()];
  writeFileSync(first, lineOf(a));
  const tail = spawnTail(t, ['--data-dir', dataDir, '--json']);
  await tail.waitFor(1);
  writeFileSync(join(threats, '20261121-000002.ndjson'), lineOf(b));
  await tail.waitFor(2);
  unlinkSync(first);
  unlinkSync(join(threats, '20261121-000002.ndjson'));
  writeFileSync(join(threats, '20261122-000001.ndjson'), lineOf(c));
  assert.deepEqual(ids(await tail.waitFor(3)), [a.id, b.id, c.id]);
  tail.child.kill('SIGINT');
  assert.deepEqual(await tail.exited, { code: 0, signal: null });
  assert.equal(tail.stderr(), '');
});

test('a closed pipe ends tail quietly with 0 (| head -1), with or without --follow', async (t) => {
  const { dataDir, threats } = makeStore(t);
  const seg = join(threats, '20261121-000001.ndjson');
  // More than a pipe buffer (64 KiB), so writing really hits the closed pipe.
  writeFileSync(seg, Array.from({ length: 400 }, () => lineOf(storedRecord())).join(''));
  const pipeline = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const sh = spawn(
      'bash',
      [
        '-c',
        `set -o pipefail; "${process.execPath}" "${BIN}" threats tail --json --no-follow -n 1000 --data-dir "${dataDir}" | head -1`,
      ],
      { env: cleanEnv() },
    );
    let stdout = '';
    let stderr = '';
    sh.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    sh.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    sh.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  assert.equal(pipeline.stderr, '');
  assert.equal(pipeline.code, 0);
  assert.equal(pipeline.stdout.split('\n').filter(Boolean).length, 1);

  // Following: the reader goes away; tail notices at its next write and exits 0 without a word.
  const tail = spawnTail(t, ['--data-dir', dataDir, '--json', '-n', '1']);
  await tail.waitFor(1);
  tail.child.stdout?.destroy();
  appendFileSync(seg, Array.from({ length: 400 }, () => lineOf(storedRecord())).join(''));
  assert.deepEqual(await tail.exited, { code: 0, signal: null });
  assert.equal(tail.stderr(), '');
});
