// Measures the dashboard's rolling counts at their worst (issue 27 F4): 300,000 distinct 4,096-character
// threats over 25 hours fill every hour's sketch; prints the cost of counting and of a summary and what is
// held. Run with `node --expose-gc --import tsx test/tools/measure-dashboard-counts.ts`; not part of the suite.
import { RecentCounts } from '../../src/admin/recent-counts.js';
import type { StoredRecord } from '../../src/records/stored-record.js';

let now = Date.parse('2026-11-23T12:00:00Z');
const counts = new RecentCounts(() => now);
const long = 'y'.repeat(4096);
const records = 300_000;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
gc();
const heapBefore = process.memoryUsage().heapUsed;
let started = performance.now();
for (let i = 0; i < records; i++) {
  now += 300;
  counts.add({
    received_at: new Date(now).toISOString(),
    criticality: i % 5,
    threat: `${i} ${long}`.slice(0, 4096),
    src_ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  } as StoredRecord);
}
const addMicros = ((performance.now() - started) * 1000) / records;
const summaryMs: number[] = [];
for (let k = 0; k < 21; k++) {
  started = performance.now();
  counts.summary(10);
  summaryMs.push(performance.now() - started);
}
summaryMs.sort((a, b) => a - b);
gc();
console.log(
  JSON.stringify({
    addMicrosPerRecord: Number(addMicros.toFixed(2)),
    summaryMsMedian: Number(summaryMs[10]?.toFixed(2)),
    summaryMsMax: Number(summaryMs[20]?.toFixed(2)),
    retained: counts.retained(),
    heapGrowthMB: Number(((process.memoryUsage().heapUsed - heapBefore) / 1e6).toFixed(1)),
  }),
);
