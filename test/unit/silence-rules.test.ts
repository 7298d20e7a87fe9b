// The silence watcher's decision at one look (src/sensors/silence-rules.ts): when a watched sensor is silent,
// when it is back, the grace of one interval from the collector's start, the slack for stats on their way, and
// the silences forgotten without a word (revoked, deleted, no longer watched).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookForSilence } from '../../src/sensors/silence-rules.js';
import type { Sensor } from '../../src/store/registry.js';
import type { SensorActivity } from '../../src/store/store.js';

const T0 = Date.parse('2026-11-28T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function sensor(name: string, fields: Partial<Sensor> = {}): Sensor {
  return {
    name,
    description: '',
    timezone: null,
    status: 'active',
    created_at: iso(T0 - 86_400_000),
    revoked_at: null,
    keys: [],
    ...fields,
  };
}

const seen = (at: number): SensorActivity => ({
  last_seen: iso(at),
  last_accepted: iso(at),
  last_address: '192.0.2.1',
  records_received: 1,
  requests_rejected: 0,
});

test('silent once nothing was accepted for its interval; the silence begins where the interval ran out', () => {
  const look = (now: number) =>
    lookForSilence({
      sensors: [sensor('fw', { expect_every: '1h' })],
      activity: { fw: seen(T0) },
      silences: {},
      configuredExpectEvery: 'off',
      startedAt: T0 - 86_400_000,
      now,
    });
  assert.deepEqual(look(T0 + 3_600_000).events, []);
  const [event] = look(T0 + 3_605_000).events;
  assert.deepEqual(
    [event?.kind, event?.silent_since, event?.last_seen, event?.silent_for_ms],
    ['silent', iso(T0 + 3_600_000), iso(T0), 5000],
  );
});

test('a collector that was down gives every sensor its interval again from its start', () => {
  const input = {
    sensors: [sensor('fw', { expect_every: '1h' })],
    activity: { fw: seen(T0 - 86_400_000) },
    silences: {},
    configuredExpectEvery: 'off',
    startedAt: T0,
  };
  assert.deepEqual(lookForSilence({ ...input, now: T0 + 60_000 }).events, []);
  assert.equal(
    lookForSilence({ ...input, now: T0 + 3_600_001 }).events[0]?.silent_since,
    iso(T0 + 3_600_000),
  );
});

test('back at a record accepted after the silence began; a stored silence is not reported again', () => {
  const silences = { fw: { silent_since: iso(T0 + 3_600_000) } };
  const base = { sensors: [sensor('fw', { expect_every: '1h' })], silences, configuredExpectEvery: 'off' };
  const still = lookForSilence({ ...base, activity: { fw: seen(T0) }, startedAt: T0, now: T0 + 9e6 });
  assert.deepEqual(still, { events: [], dropped: [] });
  const back = lookForSilence({
    ...base,
    activity: { fw: seen(T0 + 3_700_000) },
    startedAt: T0,
    now: T0 + 3_701_000,
  });
  assert.deepEqual(
    back.events.map((e) => [e.kind, e.silent_for_ms]),
    [['back', 100_000]],
  );
});

test('the default interval, off per sensor, revoked and deleted sensors: never silent, their silences forgotten', () => {
  const look = lookForSilence({
    sensors: [
      sensor('by-default'),
      sensor('off', { expect_every: 'off' }),
      sensor('revoked', { status: 'revoked', revoked_at: iso(T0) }),
    ],
    activity: {},
    silences: {
      off: { silent_since: iso(T0) },
      revoked: { silent_since: iso(T0) },
      deleted: { silent_since: iso(T0) },
    },
    configuredExpectEvery: '10m',
    startedAt: T0 - 86_400_000,
    now: T0,
  });
  assert.deepEqual(
    look.events.map((e) => [e.kind, e.sensor, e.expect_every_ms]),
    [['silent', 'by-default', 600_000]],
  );
  assert.deepEqual(look.dropped.sort(), ['deleted', 'off', 'revoked']);
});

test('the slack: a silence is reported only once a record on its way would have arrived', () => {
  const input = {
    sensors: [sensor('fw', { expect_every: '3s' })],
    activity: { fw: seen(T0) },
    silences: {},
    configuredExpectEvery: 'off',
    startedAt: T0 - 60_000,
    slackMs: 1500,
  };
  assert.deepEqual(lookForSilence({ ...input, now: T0 + 4000 }).events, []);
  assert.equal(lookForSilence({ ...input, now: T0 + 4600 }).events[0]?.silent_since, iso(T0 + 3000));
});
