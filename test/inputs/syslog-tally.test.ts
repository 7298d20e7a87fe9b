// The syslog tally's bounds: the latest samples per sensor, and a total over every sensor that takes the least
// recently failing sensor's samples first.
import assert from 'node:assert/strict';
import test from 'node:test';
import {
  SAMPLE_BYTES,
  SAMPLES_IN_ALL,
  SAMPLES_PER_SENSOR,
  SyslogTally,
} from '../../src/inputs/syslog/syslog-tally.js';

const entry = { at: '2026-11-26T12:00:00.000Z', remoteAddr: '192.0.2.1', format: 'cef', reason: 'bad' };

test('samples: the latest per sensor, each cut to SAMPLE_BYTES with its full length kept', () => {
  const tally = new SyslogTally();
  for (let i = 0; i < SAMPLES_PER_SENSOR + 5; i++) tally.sample('a', entry, Buffer.from(`m${i}`));
  tally.sample('a', entry, Buffer.alloc(SAMPLE_BYTES * 3, 'z'));
  const { samples } = tally.report('a');
  assert.equal(samples.length, SAMPLES_PER_SENSOR);
  assert.equal(samples[0]?.message, 'm6');
  assert.equal(samples.at(-1)?.bytes, SAMPLE_BYTES * 3);
  assert.equal(samples.at(-1)?.message.length, SAMPLE_BYTES);
  assert.deepEqual(tally.report('nobody'), { sensor: 'nobody', counts: [], samples: [] });
});

test('samples: never more than SAMPLES_IN_ALL; the sensor that failed longest ago gives them up first', () => {
  const tally = new SyslogTally();
  const sensors = Math.ceil(SAMPLES_IN_ALL / SAMPLES_PER_SENSOR) + 10;
  for (let s = 0; s < sensors; s++) {
    for (let i = 0; i < SAMPLES_PER_SENSOR; i++) tally.sample(`s${s}`, entry, Buffer.from(`${s}.${i}`));
  }
  // s0 fails again: it is now the most recent, s1 the oldest.
  tally.sample('s0', entry, Buffer.from('again'));
  let total = 0;
  for (let s = 0; s < sensors; s++) total += tally.report(`s${s}`).samples.length;
  assert.equal(total, SAMPLES_IN_ALL);
  assert.equal(tally.report('s1').samples.length, 0);
  assert.equal(tally.report('s0').samples.at(-1)?.message, 'again');
  assert.equal(tally.report(`s${sensors - 1}`).samples.length, SAMPLES_PER_SENSOR);
});

test('counts: one row per sensor and format', () => {
  const tally = new SyslogTally();
  tally.count('a', 'cef', 'received', 3);
  tally.count('a', 'cef', 'invalid');
  tally.count('a', 'panos', 'other');
  tally.count('b', 'cef', 'stored', 2);
  assert.deepEqual(tally.report('a').counts, [
    { sensor: 'a', format: 'cef', received: 3, stored: 0, other: 0, invalid: 1, truncated: 0, incomplete: 0 },
    {
      sensor: 'a',
      format: 'panos',
      received: 0,
      stored: 0,
      other: 1,
      invalid: 0,
      truncated: 0,
      incomplete: 0,
    },
  ]);
});

test('drain hands over what was gathered and starts afresh; merge sums deltas and keeps samples in time order', () => {
  const worker1 = new SyslogTally();
  const worker2 = new SyslogTally();
  assert.equal(worker1.drain(), null, 'nothing gathered: nothing to report');
  worker1.count('a', 'cef', 'received', 3);
  worker1.count('a', 'cef', 'stored', 2);
  worker1.refuse('limit');
  worker1.sample('a', { ...entry, at: '2026-11-26T12:00:02.000Z' }, Buffer.from('late'));
  worker2.count('a', 'cef', 'received', 4);
  worker2.count('a', 'cef', 'invalid');
  worker2.refuse('no_sensor');
  worker2.sample('a', { ...entry, at: '2026-11-26T12:00:01.000Z' }, Buffer.from('early'));

  const primary = new SyslogTally();
  for (const w of [worker1, worker2]) {
    const delta = w.drain();
    assert.ok(delta);
    // What crosses the IPC channel: JSON-serialisable.
    primary.merge(JSON.parse(JSON.stringify(delta)));
    assert.equal(w.drain(), null, 'drained');
    assert.deepEqual(w.report('a'), { sensor: 'a', counts: [], samples: [] });
  }
  assert.deepEqual(primary.report('a').counts, [
    { sensor: 'a', format: 'cef', received: 7, stored: 2, other: 0, invalid: 1, truncated: 0, incomplete: 0 },
  ]);
  assert.deepEqual(
    primary.report('a').samples.map((s) => s.message),
    ['early', 'late'],
  );
  assert.deepEqual(primary.refused, { no_sensor: 1, limit: 1, relp_protocol: 0, memory: 0 });

  // A refusal alone is a report, whatever its reason (a worker's broken RELP session reached no primary).
  const worker3 = new SyslogTally();
  worker3.refuse('relp_protocol');
  primary.merge(JSON.parse(JSON.stringify(worker3.drain())));
  assert.equal(worker3.drain(), null, 'drained');
  assert.deepEqual(primary.refused, { no_sensor: 1, limit: 1, relp_protocol: 1, memory: 0 });

  // Bounds hold over merged samples: the latest SAMPLES_PER_SENSOR.
  for (let i = 0; i < SAMPLES_PER_SENSOR + 3; i++) {
    worker1.sample(
      'a',
      { ...entry, at: `2026-11-26T13:00:${String(i).padStart(2, '0')}.000Z` },
      Buffer.from(`n${i}`),
    );
  }
  primary.merge(worker1.drain() as NonNullable<ReturnType<SyslogTally['drain']>>);
  const samples = primary.report('a').samples;
  assert.equal(samples.length, SAMPLES_PER_SENSOR);
  assert.equal(samples.at(-1)?.message, `n${SAMPLES_PER_SENSOR + 2}`);
});
