// `npm run bench:workers [-- --quick]`: `serve --workers 2` vs `--workers 1` vs the bare node:https
// reference, keep-alive single firewall records and batched generic records, alternated ref/w1/w2.
// Nothing is pinned: two workers need both cores, so the load generator shares them. Besides req/s (which
// that sharing limits) it reports what does not depend on it: server CPU per request (primary and workers
// summed) and records per second per busy server core.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicrosPerRequest, LoadWorker, type Measured, standardWorkload, type Workload } from './load.js';
import { type Pinning, ROOT, type ServerUnderTest, startReference, startThreatcol } from './processes.js';
import { fmt, median } from './report.js';

const quick = process.argv.includes('--quick');
const seconds = quick ? 1 : 5;
const rounds = quick ? 2 : 5;
const unpinned: Pinning = {
  pinned: false,
  serverCpu: '',
  loadCpu: '',
  reason: 'not pinned (workers need every core)',
};
const log = (m: string) => process.stdout.write(`${m}\n`);

const workloads: { name: string; w: Workload }[] = [
  {
    name: 'keep-alive, single /firewall records',
    w: standardWorkload('firewall', seconds),
  },
  {
    name: 'batched, /generic arrays of 100',
    w: standardWorkload('generic', seconds),
  },
];

const root = mkdtempSync(join(tmpdir(), 'threatcol-bench-workers-'));
const load = new LoadWorker(unpinned);
const servers: ServerUnderTest[] = [];
const results: Record<string, Record<string, Measured[]>> = {};
try {
  const w1 = await startThreatcol('workers 1', join(root, 'w1'), unpinned, { args: ['--workers', '1'] });
  const w2 = await startThreatcol('workers 2', join(root, 'w2'), unpinned, { args: ['--workers', '2'] });
  const ref = await startReference('reference', w1.certPath, w1.keyPath, unpinned);
  servers.push(w1, w2, ref);
  for (const { name, w } of workloads) {
    log(`${name}: warm-up`);
    for (const s of [ref, w1, w2])
      await load.measure('autocannon', s, s === w2 ? w2 : w1, { ...w, seconds: 1 });
    const runs: Record<string, Measured[]> = { reference: [], 'workers 1': [], 'workers 2': [] };
    for (let i = 0; i < rounds; i++) {
      for (const s of [ref, w1, w2]) {
        const m = await load.measure('autocannon', s, s === w2 ? w2 : w1, w);
        (runs[s.name] as Measured[]).push(m);
        if (m.non2xx + m.errors > 0) log(`  ${s.name}: ${m.non2xx} non-2xx, ${m.errors} errors`);
      }
      log(
        `  round ${i + 1}: ${Object.entries(runs)
          .map(([k, ms]) => `${k} ${fmt.n(ms.at(-1)?.requestsPerSecond ?? 0)} req/s`)
          .join(', ')}`,
      );
    }
    results[name] = runs;
  }
} finally {
  load.close();
  for (const s of servers) await s.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
}

const row = (ms: Measured[]) => ({
  requestsPerSecond: median(ms.map((m) => m.requestsPerSecond)),
  recordsPerSecond: median(ms.map((m) => m.recordsPerSecond)),
  serverCpuUsPerRequest: median(ms.map(cpuMicrosPerRequest)),
  serverBusyCores: median(ms.map((m) => m.serverCores)),
  recordsPerBusyCoreSecond: median(ms.map((m) => m.records / Math.max(1e-9, m.serverCpuSeconds))),
  p99Ms: median(ms.map((m) => m.latencyMs.p99)),
});
const table: string[] = [
  '| workload | server | req/s | records/s | server CPU per request | server busy cores | records/s per busy core | p99 |',
  '|---|---|---|---|---|---|---|---|',
];
const summary: Record<string, Record<string, ReturnType<typeof row>>> = {};
for (const [name, runs] of Object.entries(results)) {
  summary[name] = {};
  for (const [server, ms] of Object.entries(runs)) {
    const r = row(ms);
    (summary[name] as Record<string, ReturnType<typeof row>>)[server] = r;
    table.push(
      `| ${name} | ${server} | ${fmt.n(r.requestsPerSecond)} | ${fmt.n(r.recordsPerSecond)} | ${fmt.n(r.serverCpuUsPerRequest)} us | ${r.serverBusyCores.toFixed(2)} | ${fmt.n(r.recordsPerBusyCoreSecond)} | ${fmt.ms(r.p99Ms)} |`,
    );
  }
  const one = summary[name]?.['workers 1'];
  const two = summary[name]?.['workers 2'];
  if (one && two) {
    table.push(
      `| ${name} | 2 vs 1 | ${fmt.x(two.requestsPerSecond / one.requestsPerSecond)} | ${fmt.x(two.recordsPerSecond / one.recordsPerSecond)} | ${fmt.x(two.serverCpuUsPerRequest / one.serverCpuUsPerRequest)} | ${fmt.x(two.serverBusyCores / one.serverBusyCores)} | ${fmt.x(two.recordsPerBusyCoreSecond / one.recordsPerBusyCoreSecond)} | |`,
    );
  }
}
const header = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${unpinned.reason}, ${rounds} rounds of ${seconds} s, medians`;
log(`\n${header}\n${table.join('\n')}`);
const dir = join(ROOT, 'test/bench/results');
mkdirSync(dir, { recursive: true });
writeFileSync(
  join(dir, 'workers-latest.json'),
  `${JSON.stringify({ date: new Date().toISOString(), header, summary, results }, null, 2)}\n`,
);
