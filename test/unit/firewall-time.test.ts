// Unit and property tests: the firewall time shape, calendar validity and zone conversion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  firewallTimeToUtcMs,
  wallTimeToUtc,
  wallTimeToUtcUncached,
} from '../../src/records/firewall-time.js';
import { isFirewallTime, parseFirewallTime, type WallTime } from '../../src/schemas/firewall-time-format.js';

const at = (text: string, zone: string) => {
  const wall = parseFirewallTime(text);
  assert.ok(wall, text);
  return wallTimeToUtc(wall, zone).toISOString();
};

test('accepts real calendar times only', () => {
  assert.ok(isFirewallTime('2024/02/29 23:59:59'));
  assert.ok(isFirewallTime('2000/02/29 00:00:00'));
  for (const bad of [
    '2023/02/29 00:00:00',
    '1900/02/29 00:00:00',
    '2024/04/31 00:00:00',
    '2024/13/01 00:00:00',
    '2024/00/10 00:00:00',
    '2024/01/00 00:00:00',
    '2024/01/01 24:00:00',
    '2024/01/01 23:60:00',
    '2024/01/01 23:59:60',
    '2024-01-01 10:00:00',
    '2024/1/01 10:00:00',
    ' 2024/01/01 10:00:00',
    '2024/01/01 10:00:00Z',
    '',
  ]) {
    assert.equal(isFirewallTime(bad), false, bad);
  }
});

test('converts wall time in a zone to UTC, including DST edges', () => {
  assert.equal(at('2026/11/21 10:15:30', 'UTC'), '2026-11-21T10:15:30.000Z');
  assert.equal(at('2026/07/01 12:00:00', 'Europe/Berlin'), '2026-07-01T10:00:00.000Z');
  assert.equal(at('2026/01/01 12:00:00', 'America/New_York'), '2026-01-01T17:00:00.000Z');
  assert.equal(at('2026/01/01 12:00:00', 'Asia/Kolkata'), '2026-01-01T06:30:00.000Z');
  // Spring forward in New York (2026-03-08 02:00 -> 03:00): 02:30 does not exist; moved forward by the gap.
  assert.equal(at('2026/03/08 02:30:00', 'America/New_York'), '2026-03-08T07:30:00.000Z');
  // Fall back (2026-11-01 02:00 -> 01:00): 01:30 happens twice; the earlier instant (EDT) is taken.
  assert.equal(at('2026/11/01 01:30:00', 'America/New_York'), '2026-11-01T05:30:00.000Z');
});

test('property: every valid shape converts to a time within 14 h of the same wall time in UTC', () => {
  const zones = ['UTC', 'Europe/Berlin', 'America/Los_Angeles', 'Pacific/Kiritimati', 'Australia/Lord_Howe'];
  fc.assert(
    fc.property(
      fc.date({ min: new Date('1971-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }),
      fc.constantFrom(...zones),
      (d, zone) => {
        const iso = d.toISOString();
        const text = `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)} ${iso.slice(11, 19)}`;
        const wall = parseFirewallTime(text);
        assert.ok(wall);
        const utc = wallTimeToUtc(wall, zone).getTime();
        assert.ok(Math.abs(utc - Math.floor(d.getTime() / 1000) * 1000) <= 14 * 3600_000);
      },
    ),
    { seed: 42, numRuns: 300 },
  );
});

test('property: no string crashes the parser', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      parseFirewallTime(s);
    }),
    { seed: 7, numRuns: 2000 },
  );
});

// Zones with DST of an hour, of 30 minutes (Lord Howe), none (Kolkata), DST dropped in 2019 (Sao Paulo), and a
// +12:45/+13:45 zone (Chatham).
const CACHE_ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'America/Sao_Paulo',
  'Pacific/Chatham',
];

const wallText = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)} ${iso.slice(11, 19)}`;
};
const offsetFormat = new Map<string, Intl.DateTimeFormat>();
/** The zone's offset at an instant, asked of ICU directly (test-side, independent of the module). */
function zoneOffset(ms: number, zone: string): number {
  let f = offsetFormat.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    offsetFormat.set(zone, f);
  }
  const name = f.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
}
const transitionCache = new Map<string, number[]>();
/** Instants (UTC ms, to the minute) at which `zone` changed its offset during `year`. */
function transitions(zone: string, year: number): number[] {
  const key = `${zone} ${year}`;
  const known = transitionCache.get(key);
  if (known) return known;
  const found: number[] = [];
  const end = Date.UTC(year + 1, 0, 1);
  for (let t = Date.UTC(year, 0, 1); t < end; t += 86_400_000) {
    if (zoneOffset(t, zone) === zoneOffset(t + 86_400_000, zone)) continue;
    let lo = t;
    let hi = t + 86_400_000;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (zoneOffset(mid, zone) === zoneOffset(lo, zone)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  transitionCache.set(key, found);
  return found;
}

const sameConversion = (wall: WallTime, zone: string, label: string) =>
  assert.equal(
    wallTimeToUtc(wall, zone).toISOString(),
    wallTimeToUtcUncached(wall, zone).toISOString(),
    `${label} in ${zone}`,
  );

test('property: the cached conversion equals the uncached one at random instants, 2000-2100', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2100, 11, 31, 23, 59, 59) / 1000 }),
      fc.constantFrom(...CACHE_ZONES),
      (seconds, zone) => {
        const text = wallText(seconds * 1000);
        const wall = parseFirewallTime(text);
        assert.ok(wall, text);
        sameConversion(wall, zone, text);
      },
    ),
    { seed: 12, numRuns: 600 },
  );
});

test('property: the cached conversion equals the uncached one at wall times in gaps and overlaps', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...CACHE_ZONES.filter((z) => z !== 'Asia/Kolkata')),
      fc.integer({ min: 2000, max: 2100 }),
      fc.nat(),
      // Seconds from the transition, in the wall time just before it: covers the gap or the repeated hour.
      fc.integer({ min: -2 * 3600, max: 2 * 3600 }),
      (zone, year, pick, delta) => {
        const changes = transitions(zone, year);
        fc.pre(changes.length > 0);
        const change = changes[pick % changes.length] as number;
        const wallBefore = change + zoneOffset(change - 60_000, zone);
        const text = wallText(wallBefore + delta * 1000);
        const wall = parseFirewallTime(text);
        assert.ok(wall, text);
        sameConversion(wall, zone, text);
      },
    ),
    { seed: 13, numRuns: 400 },
  );
});

test('cached conversions at every minute around transitions, 30-minute and 1-hour DST', () => {
  for (const zone of ['Australia/Lord_Howe', 'Europe/Berlin', 'Pacific/Chatham']) {
    for (const change of transitions(zone, 2031)) {
      const wallBefore = change + zoneOffset(change - 60_000, zone);
      for (let m = -120; m <= 120; m++) {
        const text = wallText(wallBefore + m * 60_000);
        sameConversion(parseFirewallTime(text) as WallTime, zone, text);
      }
    }
  }
  // Lord Howe springs forward 30 minutes (2031-10-05 02:00 -> 02:30): 02:15 is moved forward by the gap.
  assert.equal(at('2031/10/05 02:15:00', 'Australia/Lord_Howe'), '2031-10-04T15:45:00.000Z');
  // And falls back 30 minutes (2031-04-06 02:00 -> 01:30): 01:45 happens twice, the earlier instant is taken.
  assert.equal(at('2031/04/06 01:45:00', 'Australia/Lord_Howe'), '2031-04-05T14:45:00.000Z');
});

test('the text conversion, memoised by zone and minute, equals the uncached one second by second across changes', () => {
  // Monrovia went from -00:44:30 to UTC in 1972: a change inside a wall minute (the shape starts at 1970).
  // Each second is converted in turn, so the memo of its minute is the one read.
  const cases: [string, number][] = [
    ['Africa/Monrovia', 1972],
    ['Europe/Berlin', 2031],
    ['Australia/Lord_Howe', 2031],
  ];
  let compared = 0;
  for (const [zone, year] of cases) {
    for (const change of transitions(zone, year)) {
      // The wall times either side of the change: where a gap or an overlap begins, and where it ends.
      const walls = [change + zoneOffset(change - 60_000, zone), change + zoneOffset(change + 60_000, zone)];
      for (const wall of walls)
        for (let s = -150; s <= 150; s++) {
          const text = wallText(Math.floor(wall / 60_000) * 60_000 + s * 1000);
          const expected = wallTimeToUtcUncached(parseFirewallTime(text) as WallTime, zone).getTime();
          assert.equal(firewallTimeToUtcMs(text, zone), expected, `${text} in ${zone}`);
          compared++;
        }
    }
  }
  assert.ok(compared > 2400, `${compared} conversions compared`);
});
