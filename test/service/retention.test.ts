// Retention: the oldest segments past the age or total-size bound are deleted at start and on each interval,
// logged one by one, and the segment being written is never deleted.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.js';
import { applyRetention } from '../../src/store/files/retention.js';
import { segmentFileName, threatsDir, utcDay } from '../../src/store/files/segments.js';
import { post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { startHarnessDaemon } from './harness.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

function segment(dataDir: string, daysAgo: number, seq: number, bytes: number, now = NOW): string {
  const dir = threatsDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = segmentFileName(utcDay(now - daysAgo * DAY), seq);
  writeFileSync(join(dir, file), `${'x'.repeat(bytes - 1)}\n`);
  return file;
}

const files = (dataDir: string) => readdirSync(threatsDir(dataDir)).sort();

test('age bound: a segment goes once its whole day is older than the bound, the newest never', () => {
  const dataDir = makeTempDir();
  const old = segment(dataDir, 10, 1, 100);
  const edge = segment(dataDir, 3, 1, 100); // its day ended 2.5 days ago: younger than 3 days
  const newest = segment(dataDir, 0, 1, 100);
  const result = applyRetention({ dataDir, days: 3, maxBytes: null, now: NOW });
  assert.deepEqual(result.removed, [{ file: old, bytes: 100, reason: 'age' }]);
  assert.deepEqual(files(dataDir), [edge, newest]);
  // Even past every bound, the newest segment stays: it is the one being written.
  // A store idle for 30 days: the run after a regular interval ages it out.
  const HOUR = 3_600_000;
  const later = applyRetention({
    dataDir,
    days: 1,
    maxBytes: 4096,
    now: NOW + 30 * DAY,
    lastRunAt: NOW + 30 * DAY - HOUR,
    intervalMs: HOUR,
  });
  assert.deepEqual(
    later.removed.map((r) => r.file),
    [edge],
  );
  assert.deepEqual(files(dataDir), [newest]);
});

test('a clock far ahead at the first run, or jumping forward between runs, postpones the age pass', () => {
  const dataDir = makeTempDir();
  const old = segment(dataDir, 10, 1, 100);
  const newest = segment(dataDir, 0, 1, 100);
  const HOUR = 3_600_000;
  const YEARS = 5 * 365 * DAY;
  // Booted with the RTC five years ahead: the first run keeps everything.
  const boot = applyRetention({ dataDir, days: 3, maxBytes: null, now: NOW + YEARS });
  assert.equal(boot.ageSkipped, true);
  assert.deepEqual(files(dataDir), [old, newest]);
  // A running daemon whose clock jumps five years between two hourly runs: kept too.
  const jump = applyRetention({
    dataDir,
    days: 3,
    maxBytes: null,
    now: NOW + YEARS,
    lastRunAt: NOW,
    intervalMs: HOUR,
  });
  assert.equal(jump.ageSkipped, true);
  assert.deepEqual(files(dataDir), [old, newest]);
  // The next regular run with a sane clock applies the bound.
  const sane = applyRetention({
    dataDir,
    days: 3,
    maxBytes: null,
    now: NOW + HOUR,
    lastRunAt: NOW,
    intervalMs: HOUR,
  });
  assert.equal(sane.ageSkipped, false);
  assert.deepEqual(files(dataDir), [newest]);
});

test('size bound: the oldest segments go until the rest fits; the current segment is kept even if older', () => {
  const dataDir = makeTempDir();
  const a = segment(dataDir, 2, 1, 5000);
  const b = segment(dataDir, 2, 2, 5000);
  const c = segment(dataDir, 1, 1, 5000);
  const d = segment(dataDir, 0, 1, 5000);
  const result = applyRetention({ dataDir, days: null, maxBytes: 12_000, now: NOW, current: a });
  assert.deepEqual(
    result.removed.map((r) => [r.file, r.reason]),
    [
      [b, 'size'],
      [c, 'size'],
    ],
  );
  assert.deepEqual(files(dataDir), [a, d]);
  assert.equal(result.keptBytes, 10_000);
  assert.equal(result.keptSegments, 2);
});

test('retention.days defaults to 90 and maxBytes to none, with their own environment variables (empty: no bound)', () => {
  const loaded = loadConfig({ env: {}, defaultConfigPath: '/nonexistent' });
  assert.deepEqual(loaded.config.store.retention, { days: 90, maxBytes: null });
  assert.equal(loaded.config.store.segmentMaxBytes, 64 * 1024 * 1024);
  const env = loadConfig({
    env: { THREATCOL_STORE_RETENTION_DAYS: '7', THREATCOL_STORE_RETENTION_MAX_BYTES: '1048576' },
    defaultConfigPath: '/nonexistent',
  });
  assert.deepEqual(env.config.store.retention, { days: 7, maxBytes: 1_048_576 });
  const off = loadConfig({
    env: { THREATCOL_STORE_RETENTION_DAYS: '', THREATCOL_STORE_RETENTION_MAX_BYTES: '' },
    defaultConfigPath: '/nonexistent',
  });
  assert.deepEqual(off.config.store.retention, { days: null, maxBytes: null });
});

test('the daemon applies retention at start and on its interval, and logs every removed segment', async (t) => {
  const dataDir = makeTempDir(t);
  const now = Date.now();
  const ancient = segment(dataDir, 40, 1, 300, now);
  const recent = segment(dataDir, 1, 1, 300, now);
  const h = await startHarnessDaemon(
    t,
    dataDir,
    { 'store.retention.days': 30, 'store.retention.maxBytes': null },
    { retentionIntervalMs: 100 },
  );
  const first = await h.waitForLog((l) => l.msg === 'removed a record segment past retention');
  assert.equal(first.segment, ancient);
  assert.equal(first.reason, 'age');
  assert.equal(first.bytes, 300);
  assert.ok(h.logs.indexOf(first) < h.logs.findIndex((l) => l.msg === 'threatcol is listening'));
  assert.equal(existsSync(join(threatsDir(dataDir), ancient)), false);
  assert.equal(existsSync(join(threatsDir(dataDir), recent)), true);

  // A segment that appears later (e.g. restored from a backup) goes at the next run, without a restart.
  const mark = h.logs.length;
  const restored = segment(dataDir, 50, 1, 200, now);
  const second = await h.waitForLog((l) => l.msg === 'removed a record segment past retention', mark);
  assert.equal(second.segment, restored);
  const summary = await h.waitForLog((l) => l.msg === 'retention applied', mark);
  assert.equal(summary.removedSegments, 1);
});

test('a size bound never deletes the segment the daemon is writing', async (t) => {
  const s = await startTestServer(t, {
    overrides: { 'store.segmentMaxBytes': 4096, 'store.retention.maxBytes': 4096 },
  });
  const key = await s.addSensor('fw1');
  const big = genericRecord({ threat: 'x'.repeat(1500) });
  for (let i = 0; i < 6; i++) {
    const r = await post(s.url, '/generic', [big], { agent: s.agent, sensor: 'fw1', key });
    assert.equal(r.status, 200, r.text);
  }
  const before = files(s.dataDir);
  assert.ok(before.length >= 3, before.join(','));
  const result = applyRetention({ dataDir: s.dataDir, days: null, maxBytes: 4096, now: Date.now() });
  assert.ok(result.removed.length >= 2);
  const after = files(s.dataDir);
  assert.deepEqual(after, [before.at(-1)]);
  // The log still appends to it.
  const r = await post(s.url, '/generic', [genericRecord()], { agent: s.agent, sensor: 'fw1', key });
  assert.equal(r.status, 200);
  assert.deepEqual(files(s.dataDir), after);
});
