// Black box: `threatcol threats search` through the real binary on hand-made stores; its answers equal a filter
// (with its own address arithmetic) over `threats tail --json` of the same store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { runCli } from '../helpers/cli.js';
import { recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const HOUR = 3_600_000;
const SRC = [
  '192.0.2.10',
  '192.0.2.200',
  '198.51.100.7',
  '2001:db8::1',
  '2001:db8:1::5',
  '::ffff:192.0.2.77',
];
const DST = ['203.0.113.1', '203.0.113.129', '2001:db8:ff::2', '10.0.0.1'];
const THREATS = ['EICAR Test File Detection', 'SSH Brute Force', 'eicar variant', 'Port Scan'];
const SENSORS = ['fw-a', 'fw-b', 'fw-c'];
const CIDRS = [
  '192.0.2.0/24',
  '192.0.2.128/25',
  '192.0.2.10',
  '198.51.100.0/22',
  '2001:db8::/32',
  '2001:db8::/48',
  '2001:0db8:0:0:0:0:0:1',
  '203.0.113.0/25',
  '0.0.0.0/0',
  '::/0',
];

/** The oracle's own address arithmetic: an address as a 128-bit number (IPv4 as its IPv4-mapped form). */
function toBigInt(address: string): bigint {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/i.exec(address);
  if (v4) return (0xffffn << 32n) | v4.slice(1).reduce((n, part) => (n << 8n) | BigInt(part), 0n);
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

function inNetwork(address: string, cidr: string): boolean {
  const [net = '', bits] = cidr.split('/');
  const v4 = net.includes('.');
  const prefix = bits === undefined ? 128 : Number(bits) + (v4 ? 96 : 0);
  // An IPv6 network holds a plain IPv4 address only inside the IPv4-mapped space (::/0 is no IPv4 network).
  if (!v4 && /^\d+\.\d+\.\d+\.\d+$/.test(address) && (prefix < 96 || toBigInt(net) >> 32n !== 0xffffn))
    return false;
  const shift = BigInt(128 - prefix);
  return toBigInt(address) >> shift === toBigInt(net) >> shift;
}

interface Query {
  src?: string;
  dst?: string;
  threat?: string;
  sensor?: string;
  sinceHours: number;
  untilHours?: number;
}

function expected(records: StoredRecord[], q: Query, now: number): string[] {
  const since = now - q.sinceHours * HOUR;
  const until = q.untilHours === undefined ? Number.POSITIVE_INFINITY : now - q.untilHours * HOUR;
  return records
    .filter((r) => {
      const at = Date.parse(r.received_at);
      return (
        at >= since &&
        at < until &&
        (q.src === undefined || inNetwork(r.src_ip, q.src)) &&
        (q.dst === undefined || inNetwork(r.dst_ip, q.dst)) &&
        (q.threat === undefined || r.threat.toLowerCase().includes(q.threat.toLowerCase())) &&
        (q.sensor === undefined || r.sensor === q.sensor)
      );
    })
    .map((r) => r.id)
    .reverse();
}

const recordArb = fc.record({
  ageMinutes: fc.integer({ min: 1, max: 72 * 60 }),
  src: fc.constantFrom(...SRC),
  dst: fc.constantFrom(...DST),
  threat: fc.constantFrom(...THREATS),
  sensor: fc.constantFrom(...SENSORS),
  criticality: fc.integer({ min: 0, max: 4 }),
});

const queryArb: fc.Arbitrary<Query> = fc
  .record(
    {
      src: fc.constantFrom(...CIDRS),
      dst: fc.constantFrom(...CIDRS),
      threat: fc.constantFrom('eicar', 'EICAR', 'brute', 'scan', 'variant', 'nothing'),
      sensor: fc.constantFrom(...SENSORS),
      sinceHours: fc.integer({ min: 1, max: 80 }),
      untilHours: fc.integer({ min: 0, max: 30 }),
    },
    { requiredKeys: ['sinceHours'] },
  )
  .filter((q) => q.untilHours === undefined || q.untilHours < q.sinceHours);

function searchArgs(dataDir: string, q: Query, limit: number): string[] {
  const args = ['threats', 'search', '--data-dir', dataDir, '--json', '--limit', String(limit)];
  args.push('--since', `${q.sinceHours}h`);
  if (q.untilHours !== undefined) args.push('--until', `${q.untilHours}h`);
  if (q.src !== undefined) args.push('--src', q.src);
  if (q.dst !== undefined) args.push('--dst', q.dst);
  if (q.threat !== undefined) args.push('--threat', q.threat);
  if (q.sensor !== undefined) args.push('--sensor', q.sensor);
  return args;
}

const idsOf = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { id: string }).id);

test('search answers, page by page, what a filter over `threats tail --json` of the same store answers', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(recordArb, { minLength: 0, maxLength: 60 }), queryArb, async (specs, q) => {
      const dataDir = makeTempDir(t);
      const now = Date.now();
      writeDaySegments(dataDir, recordsFromSpecs(specs, now));
      const tail = await runCli([
        'threats',
        'tail',
        '--data-dir',
        dataDir,
        '--json',
        '--no-follow',
        '-n',
        '100000',
      ]);
      assert.equal(tail.code, 0, tail.stderr);
      const stored = tail.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as StoredRecord);
      const want = expected(stored, q, now);
      const all = await runCli(searchArgs(dataDir, q, 1000));
      assert.equal(all.code, 0, all.stderr);
      assert.deepEqual(idsOf(all.stdout), want);
      assert.equal(all.stderr, '');
      // Pages of 7, joined with --before, are the same answer.
      const paged: string[] = [];
      let before: string | null = null;
      for (let page = 0; page < 10; page++) {
        const r = await runCli([...searchArgs(dataDir, q, 7), ...(before ? ['--before', before] : [])]);
        assert.equal(r.code, 0, r.stderr);
        paged.push(...idsOf(r.stdout));
        before = /--before (\S+)/.exec(r.stderr)?.[1] ?? null;
        if (before === null) break;
      }
      assert.deepEqual(paged, want);
    }),
    { numRuns: 12 },
  );
});

test('search refuses an address that is not one, and a window wider than 30 days, with exit 64', async (t) => {
  const dataDir = makeTempDir(t);
  writeDaySegments(dataDir, []);
  for (const args of [
    ['--src', '192.0.2.300'],
    ['--dst', '2001:db8::/129'],
    ['--src', 'fw-a'],
    ['--since', '31d'],
    ['--since', '2h', '--until', '3h'],
    ['--before', 'not-an-id'],
    ['--until', 'soon'],
  ]) {
    const r = await runCli(['threats', 'search', '--data-dir', dataDir, ...args]);
    assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.includes(args[0] as string), `${args.join(' ')}: names the flag: ${r.stderr}`);
  }
});

test('search prints the text line of `threats tail`, newest first', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  const records = recordsFromSpecs(
    [
      {
        ageMinutes: 30,
        src: '2001:db8::1',
        dst: '10.0.0.1',
        threat: 'SSH Brute Force',
        sensor: 'fw-a',
        criticality: 3,
      },
      {
        ageMinutes: 20,
        src: '192.0.2.10',
        dst: '10.0.0.1',
        threat: 'Port Scan',
        sensor: 'fw-b',
        criticality: 1,
      },
      {
        ageMinutes: 10,
        src: '2001:db8:1::5',
        dst: '10.0.0.1',
        threat: 'EICAR',
        sensor: 'fw-a',
        criticality: 4,
      },
    ],
    now,
  );
  writeDaySegments(dataDir, records);
  const r = await runCli(['threats', 'search', '--data-dir', dataDir, '--src', '2001:db8::/32'], {
    env: { NO_COLOR: '1' },
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 2);
  assert.match(
    lines[0] as string,
    /CRITICAL\s+fw-a\s+\[2001:db8:1::5\]:40000 → 10\.0\.0\.1:443 tcp\s+EICAR$/,
  );
  assert.match(
    lines[1] as string,
    /HIGH\s+fw-a\s+\[2001:db8::1\]:40000 → 10\.0\.0\.1:443 tcp\s+SSH Brute Force$/,
  );
});
