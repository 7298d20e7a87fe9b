// The dashboard's rolling counts: the last hour and the last 24 hours by criticality, top threats and sources,
// and the fixed bound on what they hold whatever the input (issue 27, F4).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_NAME_CHARS, RecentCounts, TOP_CAPACITY } from '../../src/admin/recent-counts.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { usedHeapAfterGc } from '../helpers/heap.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const at = (msAgo: number, criticality: number, threat: string, src: string) =>
  ({ received_at: new Date(NOW - msAgo).toISOString(), criticality, threat, src_ip: src }) as StoredRecord;

test('counts by window, top lists by count then name, nothing older than 24 h', () => {
  let now = NOW;
  const counts = new RecentCounts(() => now);
  counts.add(at(60_000, 4, 'Ransomware', '192.0.2.1'));
  counts.add(at(59 * 60_000, 3, 'SSH brute force', '192.0.2.2'));
  counts.add(at(2 * 3_600_000, 3, 'SSH brute force', '192.0.2.2'));
  counts.add(at(23 * 3_600_000, 1, 'Port scan', '192.0.2.3'));
  counts.add(at(25 * 3_600_000, 0, 'Ancient', '192.0.2.9'));
  const s = counts.summary(2);
  assert.deepEqual(s.lastHour, [0, 0, 0, 1, 1]);
  assert.deepEqual(s.lastDay, [0, 1, 0, 2, 1]);
  assert.deepEqual(s.topThreats, [
    { name: 'SSH brute force', count: 2 },
    { name: 'Port scan', count: 1 },
  ]);
  assert.deepEqual(s.topSources[0], { name: '192.0.2.2', count: 2 });
  // Two hours later the first hour's records have left the hour, the 23 h old one the day.
  now = NOW + 2 * 3_600_000;
  const later = counts.summary();
  assert.deepEqual(later.lastHour, [0, 0, 0, 0, 0]);
  assert.deepEqual(later.lastDay, [0, 0, 0, 2, 1]);
});

test('500,000 distinct 4,096-character threats over 30 hours: what the counts hold stays within a fixed bound', (t) => {
  let now = NOW;
  const counts = new RecentCounts(() => now);
  const long = 'x'.repeat(4096);
  const heapBefore = usedHeapAfterGc();
  let most = { buckets: 0, names: 0, chars: 0 };
  for (let i = 0; i < 500_000; i++) {
    now += 216; // 500,000 records over 30 hours: every hour's sketch overflows many times over
    counts.add({
      received_at: new Date(now).toISOString(),
      criticality: i % 5,
      threat: `${i} ${long}`.slice(0, 4096),
      src_ip: `198.51.${(i >> 8) & 255}.${i & 255}`,
      // A configured database may name anything: distinct countries, and AS names as long as threats.
      src_country: `${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(65 + ((i >> 5) % 26))}`,
      src_asn: i,
      src_as_org: long,
    } as StoredRecord);
    if (i % 10_000 === 0) {
      const r = counts.retained();
      most = {
        buckets: Math.max(most.buckets, r.buckets),
        names: Math.max(most.names, r.names),
        chars: Math.max(most.chars, r.chars),
      };
    }
  }
  const end = counts.retained();
  const heapGrowth = usedHeapAfterGc() - heapBefore;
  t.diagnostic(
    `held at most ${most.names} names, ${most.chars} characters; heap grew by ${heapGrowth} bytes`,
  );
  // 26 hours x 4 sketches (threats, sources, countries, ASes) x 256 names of at most 200 characters (+ "…");
  // minute, 10-minute and hour buckets, and the week histogram's hours.
  const names = 26 * 4 * TOP_CAPACITY;
  assert.ok(Math.max(most.names, end.names) <= names, `names ${most.names}`);
  assert.ok(Math.max(most.chars, end.chars) <= names * (MAX_NAME_CHARS + 1), `chars ${most.chars}`);
  assert.ok(Math.max(most.buckets, end.buckets) <= 62 + 146 + 26 + 170, `buckets ${most.buckets}`);
  // Held names own their characters: a cut kept as a view of the 4,096-character original would show here.
  assert.ok(heapGrowth < 16 * 1024 * 1024, `heap grew by ${heapGrowth} bytes`);
  const s = counts.summary();
  assert.equal(s.topThreats.length, 10);
  assert.ok(s.topThreats.every((e) => e.name.length === MAX_NAME_CHARS + 1 && e.name.endsWith('…')));
  assert.equal(s.topApproximate, true);
});

test('top source countries and ASes: of the records that carry them, by count then name, AS named with its organisation', () => {
  const counts = new RecentCounts(() => NOW);
  const place = (country: string, asn: number, org?: string) =>
    org === undefined
      ? { src_country: country, src_asn: asn }
      : { src_country: country, src_asn: asn, src_as_org: org };
  const records: Array<[number, Record<string, unknown>]> = [
    [3, place('US', 15169, 'GOOGLE')],
    [2, place('DE', 3320, 'Deutsche Telekom AG')],
    [2, place('US', 64500)],
    [1, place('NL', 64501, 'Example Hosting')],
    [4, {}],
  ];
  for (const [n, fields] of records)
    for (let i = 0; i < n; i++)
      counts.add({ ...at(60_000 * (i + 1), 2, 'Port scan', '8.8.8.8'), ...fields } as StoredRecord);
  const s = counts.summary(3);
  assert.deepEqual(s.topCountries, [
    { name: 'US', count: 5 },
    { name: 'DE', count: 2 },
    { name: 'NL', count: 1 },
  ]);
  assert.deepEqual(s.topAsns, [
    { name: 'AS15169 GOOGLE', count: 3 },
    { name: 'AS3320 Deutsche Telekom AG', count: 2 },
    { name: 'AS64500', count: 2 },
  ]);
  assert.deepEqual(s.topSources, [{ name: '8.8.8.8', count: 12 }]);
  assert.equal(s.topApproximate, false);
});

test('a heavy hitter among 200,000 distinct names is found, its count never under the truth; criticality counts stay exact', () => {
  const now = NOW;
  const counts = new RecentCounts(() => now);
  const byCriticality = [0, 0, 0, 0, 0];
  let heavy = 0;
  const total = 200_000;
  for (let i = 0; i < total; i++) {
    const isHeavy = i % 50 === 7;
    const criticality = (i * 7) % 5;
    byCriticality[criticality] = (byCriticality[criticality] as number) + 1;
    if (isHeavy) heavy++;
    // All within the last 4 minutes: one hour's sketch, the last-hour and last-day counts.
    counts.add(
      at(
        1 + (i % 3_000_000),
        criticality,
        isHeavy ? 'Ransomware' : `noise ${i}`,
        isHeavy ? '192.0.2.66' : `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
      ),
    );
  }
  const s = counts.summary(3);
  assert.deepEqual(s.lastHour, byCriticality);
  assert.deepEqual(s.lastDay, byCriticality);
  assert.equal(s.topThreats[0]?.name, 'Ransomware');
  assert.equal(s.topSources[0]?.name, '192.0.2.66');
  // Space-Saving: a held name's count is over the truth by at most total / capacity.
  const count = s.topThreats[0]?.count ?? 0;
  assert.ok(count >= heavy && count <= heavy + total / TOP_CAPACITY, `${count} vs ${heavy}`);
  assert.equal(s.topApproximate, true);
});

test('below the sketch size the top lists are exact and say so', () => {
  const counts = new RecentCounts(() => NOW);
  for (let i = 0; i < 100; i++) counts.add(at(60_000, 2, `threat ${i % 10}`, '192.0.2.1'));
  const s = counts.summary(10);
  assert.equal(s.topApproximate, false);
  assert.ok(s.topThreats.every((e) => e.count === 10));
  assert.deepEqual(s.topSources, [{ name: '192.0.2.1', count: 100 }]);
});

test('a long name is cut at 200 characters, never inside a surrogate pair', () => {
  const counts = new RecentCounts(() => NOW);
  const emoji = '\u{1F525}'; // two UTF-16 code units
  counts.add(at(60_000, 1, `${'a'.repeat(MAX_NAME_CHARS - 1)}${emoji}tail`, '192.0.2.1'));
  counts.add(at(60_000, 1, `${'b'.repeat(MAX_NAME_CHARS)}tail`, '192.0.2.1'));
  const names = counts.summary().topThreats.map((e) => e.name);
  assert.deepEqual(names.sort(), [`${'a'.repeat(MAX_NAME_CHARS - 1)}…`, `${'b'.repeat(MAX_NAME_CHARS)}…`]);
});

test('histograms: 144 ten-minute bars of 24 h and 168 hourly bars of 7 days, exact, the newest last', () => {
  let now = NOW + 5 * 60_000; // 12:05: the current 10-minute bar started at 12:00
  const counts = new RecentCounts(() => now);
  counts.add(at(-4 * 60_000, 4, 'now', '192.0.2.1')); // 12:04
  counts.add(at(1, 3, 'just before', '192.0.2.1')); // 11:59:59.999
  counts.add(at(30 * 60_000, 3, 'half an hour', '192.0.2.1')); // 11:30
  counts.add(at(30 * 60_000, 1, 'half an hour', '192.0.2.1'));
  counts.add(at(3 * 86_400_000, 2, 'three days', '192.0.2.1'));
  counts.add(at(8 * 86_400_000, 2, 'eight days', '192.0.2.1'));
  const day = counts.histogram('24h');
  assert.equal(day.buckets.length, 144);
  assert.equal(day.bucketMs, 600_000);
  assert.equal(day.from, '2026-11-22T12:10:00.000Z');
  assert.deepEqual(day.buckets.at(-1), [0, 0, 0, 0, 1]);
  assert.deepEqual(day.buckets.at(-2), [0, 0, 0, 1, 0]);
  assert.deepEqual(day.buckets.at(-4), [0, 1, 0, 1, 0]);
  assert.equal(
    day.buckets.flat().reduce((a, b) => a + b, 0),
    4,
    'nothing older than 24 h',
  );
  const week = counts.histogram('7d');
  assert.equal(week.buckets.length, 168);
  assert.equal(week.from, '2026-11-16T13:00:00.000Z');
  assert.deepEqual(week.buckets.at(-1), [0, 0, 0, 0, 1]);
  assert.deepEqual(week.buckets.at(-2), [0, 1, 0, 2, 0]);
  assert.deepEqual(week.buckets.at(-1 - 72), [0, 0, 1, 0, 0]);
  assert.equal(
    week.buckets.flat().reduce((a, b) => a + b, 0),
    5,
    'nothing older than 7 days',
  );
  // Four days and an hour on, the three-day-old record has left the week; the others are in it still.
  now += 4 * 86_400_000 + 3_600_000;
  const total = (range: '24h' | '7d') =>
    counts
      .histogram(range)
      .buckets.flat()
      .reduce((a, b) => a + b, 0);
  assert.equal(total('7d'), 4);
  assert.equal(total('24h'), 0);
  assert.ok(counts.retained().buckets <= 62 + 146 + 26 + 170);
});
