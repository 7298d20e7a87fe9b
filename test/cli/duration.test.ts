// Unit and property tests for the CLI's duration parser (rotate --grace, tail --since).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatDuration, MAX_DURATION_MS, parseDuration } from '../../src/cli/duration.js';
import { parseSince } from '../../src/cli/threats/threats-tail.js';

test('durations in every unit, combined, and 0', () => {
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('90m'), 5_400_000);
  assert.equal(parseDuration('24h'), 86_400_000);
  assert.equal(parseDuration('7d'), 604_800_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration(' 2m '), 120_000);
});

test('anything else is not a duration', () => {
  for (const bad of [
    '',
    '5',
    '-5s',
    '1.5h',
    'h',
    '24 h',
    '24H',
    '1y',
    '10s5',
    'ms',
    '1e3s',
    '0x10s',
    '99999999999d',
  ]) {
    assert.equal(parseDuration(bad), null, bad);
  }
});

test('property: no input crashes the parser, and a result is an integer within bounds', () => {
  fc.assert(
    fc.property(fc.string(), (s) => {
      const ms = parseDuration(s);
      assert.ok(ms === null || (Number.isSafeInteger(ms) && ms >= 0 && ms <= MAX_DURATION_MS));
    }),
  );
});

test('property: formatDuration spells a value that parses back to it', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: MAX_DURATION_MS }), (ms) => {
      assert.equal(parseDuration(formatDuration(ms)), ms);
    }),
  );
});

test('property: units add up', () => {
  fc.assert(
    fc.property(fc.nat(1000), fc.nat(59), fc.nat(59), (h, m, s) => {
      assert.equal(parseDuration(`${h}h${m}m${s}s`), ((h * 60 + m) * 60 + s) * 1000);
    }),
  );
});

test('--since reads a duration ago or an ISO time (UTC when no zone is given)', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');
  assert.equal(parseSince('90m', now), Date.parse('2026-11-21T10:30:00Z'));
  assert.equal(parseSince('2026-11-21T10:00:00Z', now), Date.parse('2026-11-21T10:00:00Z'));
  assert.equal(parseSince('2026-11-21 10:00', now), Date.parse('2026-11-21T10:00:00Z'));
  assert.equal(parseSince('2026-11-21T11:00:00+01:00', now), Date.parse('2026-11-21T10:00:00Z'));
  assert.equal(parseSince('2026-11-21', now), Date.parse('2026-11-21T00:00:00Z'));
  assert.equal(parseSince('2026-11-21t10:00z', now), Date.parse('2026-11-21T10:00:00Z'));
  assert.equal(parseSince('2026-11-21t10:00', now), Date.parse('2026-11-21T10:00:00Z'));
  assert.throws(() => parseSince('yesterday', now), { code: 'USAGE' });
  assert.throws(() => parseSince('2026-13-45', now), { code: 'USAGE' });
});
