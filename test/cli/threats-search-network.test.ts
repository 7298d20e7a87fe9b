// Black box: `threatcol threats search --src-country/--src-asn/--dst-country/--dst-asn` through the real binary on
// both backends: the answer equals a plain filter over `threats tail --json` of the same store (records carrying
// the enrichment's fields, or not), and a value that is no country code or AS number is refused with exit 64.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import pino from 'pino';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, tailJson } from '../helpers/cli.js';
import { natsBackend } from '../helpers/nats-server.js';
import { type RecordSpec, recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Where a record's address is: a country and an AS, or neither (private, unknown, enrichment off). */
const PLACES = [
  { country: 'US', asn: 15169, org: 'GOOGLE' },
  { country: 'DE', asn: 3320, org: 'Deutsche Telekom AG' },
  { country: 'US', asn: 64500, org: 'Example Hosting' },
  { country: 'NL', asn: 64500, org: 'Example Hosting' },
  null,
] as const;

interface NetworkQuery {
  src_country?: string;
  src_asn?: string;
  dst_country?: string;
  dst_asn?: string;
}

interface PlacedSpec {
  ageMinutes: number;
  /** Indexes into PLACES. */
  src: number;
  dst: number;
  sensor: string;
  criticality: number;
}

const specArb: fc.Arbitrary<PlacedSpec> = fc.record({
  ageMinutes: fc.integer({ min: 1, max: 48 * 60 }),
  src: fc.integer({ min: 0, max: PLACES.length - 1 }),
  dst: fc.integer({ min: 0, max: PLACES.length - 1 }),
  sensor: fc.constantFrom('fw-a', 'fw-b'),
  criticality: fc.integer({ min: 0, max: 4 }),
});

/** Countries as typed (any case), AS numbers bare or as `AS15169`, and values no record carries. */
const queryArb: fc.Arbitrary<NetworkQuery> = fc.record(
  {
    src_country: fc.constantFrom('US', 'de', 'Nl', 'FR'),
    src_asn: fc.constantFrom('15169', 'AS3320', 'as64500', '1'),
    dst_country: fc.constantFrom('US', 'de', 'FR'),
    dst_asn: fc.constantFrom('15169', 'AS64500', '0'),
  },
  { requiredKeys: [] },
);

/** Records from the specs, each address given its place's fields (none for the last place). */
function placedRecords(specs: PlacedSpec[], now: number): StoredRecord[] {
  const base: RecordSpec[] = specs.map((s) => ({
    ageMinutes: s.ageMinutes,
    src: `203.0.113.${s.src}`,
    dst: `198.51.100.${s.dst}`,
    threat: 'Port Scan',
    sensor: s.sensor,
    criticality: s.criticality,
  }));
  return recordsFromSpecs(base, now).map((r) => {
    const src = PLACES[Number(r.src_ip.split('.')[3])];
    const dst = PLACES[Number(r.dst_ip.split('.')[3])];
    if (src) Object.assign(r, { src_country: src.country, src_asn: src.asn, src_as_org: src.org });
    if (dst) Object.assign(r, { dst_country: dst.country, dst_asn: dst.asn, dst_as_org: dst.org });
    return r;
  });
}

/** The oracle: a plain filter over the records `threats tail --json` printed, newest first. */
function expected(stored: StoredRecord[], q: NetworkQuery): string[] {
  const asn = (text: string | undefined) =>
    text === undefined ? undefined : Number(text.replace(/^as/i, ''));
  const want = {
    src_country: q.src_country?.toUpperCase(),
    dst_country: q.dst_country?.toUpperCase(),
    src_asn: asn(q.src_asn),
    dst_asn: asn(q.dst_asn),
  };
  return stored
    .filter((r) =>
      (Object.keys(want) as Array<keyof typeof want>).every(
        (key) => want[key] === undefined || r[key] === want[key],
      ),
    )
    .map((r) => r.id)
    .reverse();
}

function flags(q: NetworkQuery): string[] {
  return Object.entries(q).flatMap(([key, value]) => [`--${key.replace('_', '-')}`, value as string]);
}

async function searchIds(q: NetworkQuery, args: string[], env: Record<string, string>): Promise<string[]> {
  const r = await runCli(
    ['threats', 'search', '--json', '--limit', '1000', '--since', '3d', ...flags(q), ...args],
    { env },
  );
  assert.equal(r.code, 0, `${flags(q).join(' ')}: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { id: string }).id);
}

test('search by country and AS equals a filter over `threats tail --json` for random record sets (files)', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(specArb, { maxLength: 40 }), queryArb, async (specs, q) => {
      const dataDir = makeTempDir(t);
      writeDaySegments(dataDir, placedRecords(specs, Date.now()));
      const stored = await tailJson(['--data-dir', dataDir], {});
      assert.deepEqual(await searchIds(q, ['--data-dir', dataDir], {}), expected(stored, q));
    }),
    { numRuns: 10 },
  );
});

test('search by country and AS equals a filter over `threats tail --json` (NATS)', async (t) => {
  const { node, dataDir, config } = await natsBackend(t);
  const specs = fc.sample(specArb, { numRuns: 60, seed: 41 });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  try {
    const log = await store.openRecordLog();
    await log.append(placedRecords(specs, Date.now()));
    await log.close();
  } finally {
    await store.close();
  }
  const env = { THREATCOL_STORE_BACKEND: 'nats', THREATCOL_NATS_SERVERS: node.url };
  const args = ['--data-dir', dataDir];
  const stored = await tailJson(args, env);
  assert.equal(stored.length, 60);
  for (const q of [
    { src_country: 'us' },
    { src_asn: 'AS64500' },
    { src_country: 'NL', src_asn: '64500' },
    { dst_country: 'DE', dst_asn: '3320' },
    { dst_asn: '1' },
  ]) {
    const want = expected(stored, q);
    assert.ok(q.dst_asn === '1' || want.length > 0, JSON.stringify(q));
    assert.deepEqual(await searchIds(q, args, env), want, JSON.stringify(q));
  }
});

test('search refuses a country that is not two letters and an AS that is not a number, with exit 64', async (t) => {
  const dataDir = makeTempDir(t);
  writeDaySegments(dataDir, []);
  for (const args of [
    ['--src-country', 'USA'],
    ['--src-country', 'U1'],
    ['--dst-country', ''],
    ['--src-asn', 'google'],
    ['--src-asn', '-1'],
    ['--dst-asn', '4294967296'],
    ['--dst-asn', 'AS'],
    ['--src-asn', '1.5'],
  ]) {
    const r = await runCli(['threats', 'search', '--data-dir', dataDir, ...args]);
    assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.includes(args[0] as string), `${args.join(' ')}: names the flag: ${r.stderr}`);
    assert.match(r.stderr, /is not a country code|is not an AS number/, args.join(' '));
  }
});
