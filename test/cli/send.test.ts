// Black box: `threatcol send` through the real binary against a real serve with its self-signed certificate.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { LoadSummary } from '../../src/client/load-test.js';
import { addSensorCli, type CliResult, runCli, type ServeProcess, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let serve: ServeProcess;
let dataDir: string;
let work: string;
let key: string;
let keyFile: string;
/** Colon-separated upper-case hex, as `serve` and openssl print it. */
let fingerprint: string;
let certFile: string;

before(async () => {
  dataDir = makeTempDir();
  work = makeTempDir();
  serve = await spawnServe(dataDir);
  key = await addSensorCli(dataDir, 'fw-send');
  keyFile = join(work, 'key');
  writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  certFile = join(dataDir, 'tls', 'cert.pem');
  fingerprint = new X509Certificate(readFileSync(certFile)).fingerprint256;
  // Wait until the daemon has picked up the new sensor (cheaply, in-process).
  const agent = trustingAgent(dataDir);
  try {
    for (let i = 0; i < 100; i++) {
      const r = await post(serve.url, '/generic', genericRecord(), { agent, sensor: 'fw-send', key });
      if (r.status === 200) return;
      await new Promise((res) => setTimeout(res, 50));
    }
  } finally {
    await agent.close();
  }
  throw new Error('the daemon never accepted the new sensor');
});

after(async () => {
  await serve.stop();
});

function send(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  const target = args.includes('--url') || options.env?.THREATCOL_URL ? [] : ['--url', serve.url];
  const who = args.includes('--sensor') || options.env?.THREATCOL_SENSOR ? [] : ['--sensor', 'fw-send'];
  const auth =
    ['--key', '--key-file'].some((f) => args.includes(f)) || options.env?.THREATCOL_KEY
      ? []
      : ['--key-file', keyFile];
  return runCli(['send', ...args, ...target, ...who, ...auth], options);
}

const storedIds = () => new Set(readStored(dataDir).map((r) => r.id as string));

function acceptedIds(r: CliResult): string[] {
  assert.equal(r.code, 0, r.stderr);
  const [status, body] = r.stdout.trim().split('\n');
  assert.equal(status, '200 OK');
  return (JSON.parse(body as string) as { ids: string[] }).ids;
}

test('--data inline, @file and - (stdin) are sent as given and stored', async () => {
  const file = join(work, 'batch.json');
  writeFileSync(
    file,
    JSON.stringify([genericRecord({ threat: 'from file 1' }), genericRecord({ threat: 'from file 2' })]),
  );
  const [inline, fromFile, fromStdin] = await Promise.all([
    send([
      'generic',
      '--data',
      JSON.stringify(genericRecord({ threat: 'inline' })),
      '--fingerprint',
      fingerprint,
    ]),
    send(['generic', '--data', `@${file}`, '--ca', certFile]),
    send(['generic', '--data', '-', '--fingerprint', fingerprint.replaceAll(':', '').toLowerCase()], {
      input: JSON.stringify(genericRecord({ threat: 'from stdin' })),
    }),
  ]);
  const ids = [...acceptedIds(inline), ...acceptedIds(fromFile), ...acceptedIds(fromStdin)];
  assert.equal(ids.length, 4);
  const stored = new Map(readStored(dataDir).map((r) => [r.id as string, r]));
  assert.deepEqual(
    ids.map((id) => stored.get(id)?.threat),
    ['inline', 'from file 1', 'from file 2', 'from stdin'],
  );
  assert.equal(fromStdin.stderr, '');
});

test('target and credentials from THREATCOL_URL, THREATCOL_SENSOR and THREATCOL_KEY', async () => {
  const r = await send(
    ['generic', '--data', JSON.stringify(genericRecord()), '--fingerprint', fingerprint, '--json'],
    {
      env: { THREATCOL_URL: serve.url, THREATCOL_SENSOR: 'fw-send', THREATCOL_KEY: key },
    },
  );
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { status: number; body: { accepted: number; ids: string[] } };
  assert.equal(out.status, 200);
  assert.equal(out.body.accepted, 1);
  assert.ok(storedIds().has(out.body.ids[0] as string));
});

test('--sample sends realistic records of each kind (and --batch an array of them)', async () => {
  const [fw, gen] = await Promise.all([
    send(['firewall', '--sample', '--fingerprint', fingerprint]),
    send(['generic', '--sample', '--batch', '5', '--fingerprint', fingerprint]),
  ]);
  const [fwId] = acceptedIds(fw);
  const genIds = acceptedIds(gen);
  assert.equal(genIds.length, 5);
  const stored = new Map(readStored(dataDir).map((r) => [r.id as string, r]));
  const f = stored.get(fwId as string) as Record<string, unknown>;
  const original = f.original as Record<string, unknown>;
  assert.equal(f.endpoint, 'firewall');
  assert.equal(f.criticality_source, 'severity');
  assert.match(String(original.time_received), /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}$/);
  assert.match(String(original.threat_name), /^[A-Za-z].*\(\d+\)$/);
  assert.match(String(f.threat_id), /^\d+$/);
  assert.ok(['informational', 'low', 'medium', 'high', 'critical'].includes(String(original.severity)));
  for (const id of genIds) assert.equal(stored.get(id)?.endpoint, 'generic');
});

test('a wrong key exits 77 like a local auth error; a bad body exits 65; the answer is printed', async () => {
  const [wrongKey, badJson, invalid] = await Promise.all([
    send(['generic', '--sample', '--fingerprint', fingerprint, '--key', 'tck_wrong']),
    send(['generic', '--data', '{"source_ip": ', '--fingerprint', fingerprint]),
    send([
      'generic',
      '--data',
      JSON.stringify(genericRecord({ criticality: 9 })),
      '--fingerprint',
      fingerprint,
    ]),
  ]);
  assert.equal(wrongKey.code, 77);
  assert.match(wrongKey.stdout, /^401 Unauthorized\n\{"error":\{"code":"AUTH_INVALID"/);
  assert.match(wrongKey.stderr, /^threatcol: AUTH_INVALID: /);
  assert.equal(badJson.code, 65);
  assert.match(badJson.stderr, /INVALID_JSON/);
  assert.equal(invalid.code, 65);
  assert.match(invalid.stdout, /^400 Bad Request\n.*VALIDATION_FAILED/);
});

test('TLS: verified by default, pinned with --fingerprint, skipped with --insecure (and a warning)', async () => {
  const wrongPin = `${'AB:'.repeat(31)}AB`;
  const body = JSON.stringify(genericRecord({ threat: 'must not arrive' }));
  const before = storedIds().size;
  const [unverified, pinnedWrong, badPin, insecure, twoTrusts] = await Promise.all([
    send(['generic', '--data', body]),
    send(['generic', '--data', body, '--fingerprint', wrongPin]),
    send(['generic', '--data', body, '--fingerprint', 'abc']),
    send(['generic', '--sample', '--insecure']),
    send(['generic', '--sample', '--insecure', '--fingerprint', fingerprint]),
  ]);
  assert.equal(unverified.code, 69);
  assert.match(unverified.stderr, /CONNECTION_FAILED: .*self-signed.*--fingerprint/);
  assert.equal(pinnedWrong.code, 69);
  assert.match(pinnedWrong.stderr, /CONNECTION_FAILED: .*fingerprint .* not the pinned AB:AB/);
  assert.equal(badPin.code, 64);
  assert.equal(twoTrusts.code, 64);
  assert.equal(insecure.code, 0, insecure.stderr);
  assert.match(insecure.stderr, /warning: --insecure/);
  // Neither refused connection sent its record.
  assert.equal(storedIds().size, before + 1);
});

test("each kind of sending's own flags given to the other exit 64 naming them; nothing is sent", async () => {
  const before = storedIds().size;
  const https = (args: string[]) => send([...args, '--fingerprint', fingerprint]);
  const syslog = (args: string[]) =>
    runCli(['send', 'syslog', '--format', 'cef', '--sample', '--url', '127.0.0.1:1', ...args]);
  const cases: [Promise<CliResult>, string][] = [
    [https(['firewall', '--sample', '--format', 'cef']), '--format: for send syslog only, not send firewall'],
    [https(['generic', '--sample', '--relp']), '--relp: for send syslog only, not send generic'],
    [https(['generic', '--sample', '--tcp']), '--tcp: for send syslog only, not send generic'],
    [
      https(['firewall', '--sample', '--client-cert', 'c.pem', '--client-key', 'c.key']),
      '--client-cert, --client-key: for send syslog only, not send firewall',
    ],
    [
      syslog(['--sensor', 'fw', '--key-file', keyFile]),
      '--key-file: for send firewall|generic only, not send syslog',
    ],
    [
      https(['firewall', '--sample', '--source', '127.0.0.2']),
      '--source: for send syslog only, not send firewall',
    ],
    [
      syslog(['--count', '2', '--batch', '5', '--rate', '1', '--repeat']),
      '--batch, --repeat, --rate: for send firewall|generic only, not send syslog',
    ],
  ];
  for (const [pending, message] of cases) {
    const r = await pending;
    assert.equal(r.code, 64, r.stderr);
    assert.equal(r.stderr.split('\n')[0], `threatcol: USAGE: ${message}`);
    assert.equal(r.stdout, '');
  }
  assert.equal(storedIds().size, before, 'nothing stored');
});

test('an unreachable collector exits 69 CONNECTION_FAILED; missing credentials exit 64', async () => {
  const closedPort = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  const [down, noKey, noSensor, noBody] = await Promise.all([
    send(['generic', '--sample', '--url', `https://127.0.0.1:${closedPort}`, '--fingerprint', fingerprint]),
    runCli(['send', 'generic', '--sample', '--url', serve.url, '--sensor', 'fw-send']),
    runCli(['send', 'generic', '--sample', '--url', serve.url, '--key', key]),
    send(['generic', '--fingerprint', fingerprint]),
  ]);
  assert.equal(down.code, 69);
  assert.match(down.stderr, /CONNECTION_FAILED: .*ECONNREFUSED/);
  for (const r of [noKey, noSensor, noBody]) assert.equal(r.code, 64, r.stderr);
});

test('load mode: N requests over C connections, counts add up, records stored', async () => {
  const before = storedIds().size;
  const r = await send([
    'generic',
    '--sample',
    '--batch',
    '3',
    '--count',
    '300',
    '--concurrency',
    '6',
    '--fingerprint',
    fingerprint,
    '--json',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout) as LoadSummary;
  assert.deepEqual(Object.keys(s), [
    'requests',
    'records',
    'stored',
    'duplicates',
    'durationMs',
    'requestsPerSecond',
    'recordsPerSecond',
    'latencyMs',
    'statuses',
    'errors',
  ]);
  assert.equal(s.requests, 300);
  assert.equal(s.records, 900);
  assert.deepEqual([s.stored, s.duplicates], [900, 0]);
  assert.deepEqual(s.statuses, { '200': 300 });
  assert.equal(s.errors, 0);
  assert.ok(s.latencyMs.p50 <= s.latencyMs.p90 && s.latencyMs.p90 <= s.latencyMs.p99);
  assert.ok(s.latencyMs.p99 <= s.latencyMs.max && s.latencyMs.max <= s.durationMs);
  assert.ok(Math.abs(s.requestsPerSecond - (300 / s.durationMs) * 1000) < 1);
  assert.equal(storedIds().size, before + 900);
});

test('load mode: --rate paces requests; refused requests are counted and set the exit code', async () => {
  const [paced, refused] = await Promise.all([
    send([
      'firewall',
      '--sample',
      '--count',
      '20',
      '--concurrency',
      '2',
      '--rate',
      '50',
      '--fingerprint',
      fingerprint,
    ]),
    send([
      'generic',
      '--sample',
      '--count',
      '10',
      '--concurrency',
      '3',
      '--fingerprint',
      fingerprint,
      '--key',
      'tck_bad',
      '--json',
    ]),
  ]);
  assert.equal(paced.code, 0, paced.stderr);
  const m = /in (\d+\.\d+) s/.exec(paced.stdout);
  // 20 requests at 50/s: the last one starts 380 ms after the first.
  assert.ok(m && Number(m[1]) >= 0.38, paced.stdout);
  assert.match(paced.stdout, /statuses {3}200: 20/);
  assert.match(paced.stdout, /latency {4}p50 [\d.]+ ms, p90 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms/);
  assert.equal(refused.code, 77);
  const s = JSON.parse(refused.stdout) as {
    requests: number;
    records: number;
    statuses: Record<string, number>;
  };
  assert.deepEqual([s.requests, s.records, s.statuses], [10, 0, { '401': 10 }]);
  assert.match(refused.stderr, /AUTH_INVALID: 10 of 10 requests were refused/);
});
