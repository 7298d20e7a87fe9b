// Black box: `threatcol source show` through the real binary on both backends: its sums equal the same sums
// over `threats tail --json` of the same store (an address across sensors, a CIDR, --since), and it names the
// block that covers a blocked address.
import assert from 'node:assert/strict';
import { BlockList, isIP } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, tailJson } from '../helpers/cli.js';
import { natsBackend } from '../helpers/nats-server.js';
import { type RecordSpec, recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SRC = ['192.0.2.10', '192.0.2.200', '198.51.100.7', '2001:db8::1', '2001:db8:1::5'];
const QUERIES = [
  '192.0.2.10',
  '192.0.2.0/24',
  '198.51.100.0/22',
  '2001:db8::/32',
  '2001:db8::1',
  '203.0.113.9',
];
// Two addresses also in another spelling (IPv4-mapped; upper case, zeros written): one target each.
const DST = [
  '203.0.113.1',
  '::ffff:203.0.113.1',
  '203.0.113.129',
  '2001:db8:ff::2',
  '2001:DB8:FF:0::2',
  '10.0.0.1',
];
const THREATS = ['EICAR Test File Detection', 'SSH Brute Force', 'Port Scan'];
const SENSORS = ['fw-a', 'fw-b', 'fw-c'];
const PORTS = [22, 443, 3389];

const specArb: fc.Arbitrary<RecordSpec> = fc.record({
  ageMinutes: fc.integer({ min: 1, max: 72 * 60 }),
  src: fc.constantFrom(...SRC),
  dst: fc.constantFrom(...DST),
  port: fc.constantFrom(...PORTS),
  threat: fc.constantFrom(...THREATS),
  sensor: fc.constantFrom(...SENSORS),
  criticality: fc.integer({ min: 0, max: 4 }),
});

/** The oracle: the summary's sums over records read back, with node:net's own address test. */
function expected(stored: StoredRecord[], address: string, since: number) {
  const [net = '', bits] = address.split('/');
  const type = isIP(net) === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(net, bits === undefined ? (type === 'ipv4' ? 32 : 128) : Number(bits), type);
  // BlockList takes an IPv4 value for ::ffff:a.b.c.d; an IPv6 network holds IPv4 ones only inside that space.
  const prefix = bits === undefined ? (type === 'ipv4' ? 32 : 128) : Number(bits);
  const holdsIpv4 = type === 'ipv4' || (prefix >= 96 && /^::ffff:/i.test(net));
  const mine = stored.filter(
    (r) =>
      Date.parse(r.received_at) >= since &&
      isIP(r.src_ip) !== 0 &&
      (isIP(r.src_ip) === 6 || holdsIpv4) &&
      list.check(r.src_ip, isIP(r.src_ip) === 4 ? 'ipv4' : 'ipv6'),
  );
  const count = <K>(key: (r: StoredRecord) => K) => {
    const m = new Map<K, number>();
    for (const r of mine) m.set(key(r), (m.get(key(r)) ?? 0) + 1);
    return m;
  };
  const threats = [...count((r) => r.threat)]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([threat, n]) => ({ threat, count: n }));
  const times = mine.map((r) => r.received_at).sort();
  return {
    records: mine.length,
    first_seen: times[0] ?? null,
    last_seen: times.at(-1) ?? null,
    criticality: [0, 1, 2, 3, 4].map((c) => mine.filter((r) => r.criticality === c).length),
    sensors: [...new Set(mine.map((r) => r.sensor))].sort(),
    targets: distinctAddresses(mine.map((r) => r.dst_ip)),
    ports: count((r) => r.dst_port).size,
    threats,
  };
}

/** Distinct addresses however written: two are one when node:net's BlockList holding one holds the other. */
function distinctAddresses(addresses: string[]): number {
  const seen: BlockList[] = [];
  for (const a of new Set(addresses)) {
    const type = isIP(a) === 4 ? 'ipv4' : 'ipv6';
    if (seen.some((list) => list.check(a, type))) continue;
    const list = new BlockList();
    list.addAddress(a, type);
    seen.push(list);
  }
  return seen.length;
}

async function show(address: string, since: string, args: string[], env: Record<string, string>) {
  const r = await runCli(['source', 'show', address, '--since', since, '--json', ...args], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function pick(summary: Record<string, unknown>) {
  const { records, first_seen, last_seen, criticality, sensors, targets, ports, threats } = summary;
  return { records, first_seen, last_seen, criticality, sensors, targets, ports, threats };
}

/** Three sensors see 198.51.100.7 (and others other addresses) over three days. */
function scenario(now: number): StoredRecord[] {
  const specs: RecordSpec[] = [];
  for (let i = 0; i < 60; i++) {
    specs.push({
      ageMinutes: 5 + i * 70,
      src: SRC[i % SRC.length] as string,
      dst: DST[i % DST.length] as string,
      port: PORTS[i % PORTS.length] as number,
      threat: THREATS[i % THREATS.length] as string,
      sensor: SENSORS[i % SENSORS.length] as string,
      criticality: i % 5,
    });
  }
  return recordsFromSpecs(specs, now);
}

async function checkBackend(args: string[], env: Record<string, string>, now: number): Promise<void> {
  const stored = await tailJson(args, env);
  assert.equal(stored.length, 60);
  // One address across sensors, a CIDR, a shorter window: each equals the oracle over the tail.
  for (const [address, since, sinceMs] of [
    ['198.51.100.7', '30d', now - 30 * 86_400_000],
    ['192.0.2.0/24', '30d', now - 30 * 86_400_000],
    ['2001:db8::/32', '24h', now - 86_400_000],
  ] as const) {
    const got = await show(address, since, args, env);
    const want = expected(stored, address, sinceMs);
    assert.ok(want.records > 0, address);
    assert.deepEqual(pick(got), want, `${address} --since ${since}`);
    assert.equal(got.address, address);
    assert.equal(got.blocked, null);
    assert.equal(got.allowed, null);
    assert.equal(got.country, null);
    assert.equal(got.bounded, null);
  }
  assert.deepEqual((await show('198.51.100.7', '30d', args, env)).sensors, SENSORS);
  // Blocked: `block add` covers the address, and the text says so.
  const block = await runCli(['block', 'add', '198.51.100.7', '--for', '1h', '--reason', 'test', ...args], {
    env,
  });
  assert.equal(block.code, 0, block.stderr);
  const blocked = await show('198.51.100.7', '30d', args, env);
  assert.equal((blocked.blocked as { address: string }).address, '198.51.100.7/32');
  assert.equal((blocked.blocked as { rule: string }).rule, 'manual');
  const text = await runCli(['source', 'show', '198.51.100.7', ...args], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /Blocked: +yes, 198\.51\.100\.7\/32 by manual/);
  assert.match(text.stdout, /Sensors: +fw-a, fw-b, fw-c/);
  // Counts with their unit, each top entry with its count as the dashboard shows it.
  const targets = blocked.targets as number;
  assert.match(
    text.stdout,
    new RegExp(`Targets: +${targets} address${targets === 1 ? '' : 'es'}: [0-9a-f.:]+ ×\\d+`),
  );
  assert.match(text.stdout, /Ports: +\d+: \d+ ×\d+/);
  assert.equal(blocked.blocks_within, 1);
  // A network holding that block is not blocked whole, and says how many blocks lie inside it.
  const network = await show('198.51.100.0/24', '30d', args, env);
  assert.equal(network.blocked, null);
  assert.equal(network.blocks_within, 1);
  const networkText = await runCli(['source', 'show', '198.51.100.0/24', ...args], { env });
  assert.match(networkText.stdout, /Blocked: +no; 1 block within \(198\.51\.100\.7\/32\)/);
  assert.equal((await show('192.0.2.0/24', '30d', args, env)).blocks_within, 0);
  // An allow entry over the block keeps it out of the feeds: the firewalls do not block it, and the text says so.
  const allow = await runCli(['allow', 'add', '198.51.100.0/24', '--reason', 'partner', ...args], { env });
  assert.equal(allow.code, 0, allow.stderr);
  const kept = await runCli(['source', 'show', '198.51.100.7', ...args], { env });
  assert.match(
    kept.stdout,
    /Blocked: +yes, 198\.51\.100\.7\/32 by manual until \S+ \(not in the feeds: the allow entry 198\.51\.100\.0\/24 keeps it out\)\n/,
  );
  assert.match(kept.stdout, /Allowed: +yes, 198\.51\.100\.0\/24 \(partner\)/);
}

test('source show sums one address across sensors, a CIDR and a window as `threats tail --json` does (files)', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  writeDaySegments(dataDir, scenario(now));
  await checkBackend(['--data-dir', dataDir], {}, now);
});

test('source show sums one address across sensors, a CIDR and a window as `threats tail --json` does (NATS)', async (t) => {
  const { node, dataDir, config } = await natsBackend(t);
  const now = Date.now();
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  try {
    const log = await store.openRecordLog();
    await log.append(scenario(now));
    await log.close();
  } finally {
    await store.close();
  }
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: node.url };
  await checkBackend(['--data-dir', dataDir], env, now);
});

test('source show equals the same sums over the stored records for random record sets', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(specArb, { maxLength: 50 }),
      fc.constantFrom(...QUERIES),
      fc.integer({ min: 1, max: 80 }),
      async (specs, address, sinceHours) => {
        const dataDir = makeTempDir(t);
        const now = Date.now();
        writeDaySegments(dataDir, recordsFromSpecs(specs, now));
        const stored = await tailJson(['--data-dir', dataDir], {});
        const got = await show(address, `${sinceHours}h`, ['--data-dir', dataDir], {});
        // The oracle's window starts when the CLI's did, give or take the seconds between: records are 30 s off
        // the minute, so a start taken a few seconds later does not move one across it.
        assert.deepEqual(pick(got), expected(stored, address, Date.parse(got.since as string)));
      },
    ),
    { numRuns: 10 },
  );
});

test('source show refuses what is not an address or CIDR, and a window over 30 days, with exit 64', async (t) => {
  const dataDir = makeTempDir(t);
  writeDaySegments(dataDir, []);
  for (const args of [['192.0.2.300'], ['2001:db8::/129'], ['fw-a'], ['192.0.2.1', '--since', '31d']]) {
    const r = await runCli(['source', 'show', ...args, '--data-dir', dataDir]);
    assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
  // A link-local source as `threats tail` prints it, zone id and all, is an address.
  const zoned = await runCli(['source', 'show', 'fe80::1%eth0', '--json', '--data-dir', dataDir]);
  assert.equal(zoned.code, 0, zoned.stderr);
  assert.equal((JSON.parse(zoned.stdout) as { address: string }).address, 'fe80::1');
});

test('source show names the country and network of the newest record that carries them', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  const spec = { src: '8.8.8.8', dst: '203.0.113.1', threat: 'Port Scan', sensor: 'fw-a', criticality: 2 };
  const [older, newer, bare] = recordsFromSpecs(
    [
      { ...spec, ageMinutes: 30 },
      { ...spec, ageMinutes: 20 },
      { ...spec, ageMinutes: 10 },
    ],
    now,
  ) as [StoredRecord, StoredRecord, StoredRecord];
  const enriched = (r: StoredRecord, country: string, asn: number, org: string) =>
    Object.assign(r, { src_country: country, src_asn: asn, src_as_org: org });
  writeDaySegments(dataDir, [
    enriched(older, 'DE', 64500, 'Old Example'),
    enriched(newer, 'US', 15169, 'GOOGLE'),
    bare,
  ]);
  const got = await show('8.8.8.8', '1h', ['--data-dir', dataDir], {});
  assert.deepEqual([got.country, got.asn, got.as_org, got.records], ['US', 15169, 'GOOGLE', 3]);
  const text = await runCli(['source', 'show', '8.8.8.8', '--data-dir', dataDir]);
  assert.match(text.stdout, /Network: +US AS15169 GOOGLE/);
});

test('source show of a network names a country or AS only when its records agree on it', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  const at = (src: string, ageMinutes: number) => ({
    src,
    dst: '192.0.2.1',
    threat: 'Port Scan',
    sensor: 'fw-a',
    criticality: 2,
    ageMinutes,
  });
  const [a, b, c] = recordsFromSpecs(
    [at('198.18.0.1', 30), at('198.18.1.1', 20), at('198.18.0.2', 10)],
    now,
  ) as [StoredRecord, StoredRecord, StoredRecord];
  // 198.18.0.0/24 is one network; 198.18.1.0/24 another AS in the same country.
  writeDaySegments(dataDir, [
    Object.assign(a, { src_country: 'DE', src_asn: 64500, src_as_org: 'Example Old Name' }),
    Object.assign(b, { src_country: 'DE', src_asn: 64501, src_as_org: 'Other Net' }),
    Object.assign(c, { src_country: 'DE', src_asn: 64500, src_as_org: 'Example GmbH' }),
  ]);
  const wide = await show('198.18.0.0/23', '1h', ['--data-dir', dataDir], {});
  assert.deepEqual([wide.country, wide.asn, wide.as_org, wide.records], ['DE', null, null, 3]);
  const narrow = await show('198.18.0.0/24', '1h', ['--data-dir', dataDir], {});
  assert.deepEqual([narrow.country, narrow.asn, narrow.as_org], ['DE', 64500, 'Example GmbH']);
  const text = await runCli(['source', 'show', '198.18.0.0/23', '--data-dir', dataDir]);
  assert.match(text.stdout, /Network: +DE, 2 ASes\n/);
  assert.deepEqual([wide.countries, wide.asns], [1, 2]);
});

test("source show keeps a sender's threat name on its line: a line feed in it cannot forge the next", async (t) => {
  const dataDir = makeTempDir(t);
  const forged = 'Port Scan\n  Allowed:     yes';
  writeDaySegments(
    dataDir,
    recordsFromSpecs(
      [
        {
          src: '198.51.100.9',
          dst: '192.0.2.1',
          threat: forged,
          sensor: 'fw-a',
          criticality: 2,
          ageMinutes: 10,
        },
      ],
      Date.now(),
    ),
  );
  const text = await runCli(['source', 'show', '198.51.100.9', '--data-dir', dataDir]);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.split('\n');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('  Allowed:')),
    ['  Allowed:     no'],
  );
  assert.ok(lines.includes('  Threats:     Port Scan?  Allowed:     yes ×1'), text.stdout);
});
