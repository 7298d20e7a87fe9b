// The dashboard's rolling counts: the last hour and the last 24 hours by criticality, top threats and sources.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecentCounts } from '../../src/admin/recent-counts.js';
import type { StoredRecord } from '../../src/records/stored-record.js';

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
