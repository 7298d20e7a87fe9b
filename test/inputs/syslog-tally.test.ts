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
    { sensor: 'a', format: 'cef', received: 3, stored: 0, other: 0, invalid: 1, truncated: 0 },
    { sensor: 'a', format: 'panos', received: 0, stored: 0, other: 1, invalid: 0, truncated: 0 },
  ]);
});
