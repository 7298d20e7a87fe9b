// Unit and property tests: the firewall time shape, calendar validity and zone conversion.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isFirewallTime, parseFirewallTime, wallTimeToUtc } from '../../src/records/firewall-time.js';

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
