// `node --import tsx test/bench/nats-ab.ts --base [LABEL=]BIN... [--batched] [--r3] [--seconds S] [--pairs N]`:
// figure 8's NATS rows only, with other builds (`--base`, repeatable: another checkout's bin/threatcol) beside
// this one, rotated reference, files, before, after in one run: a NATS change measured A B A B on a busy box.
// Run under `flock /tmp/threatcol-bench.lock` (as the other A B tools) so two benchmarks do not share the cores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue, baseBuilds } from './argv.js';
import type { BenchContext } from './figures-load.js';
import {
  type Cleanups,
  type NatsBackend,
  natsDataDir,
  natsRows,
  runCleanups,
  startNatsBackend,
} from './figures-nats.js';
import { LoadWorker, type Measured, standardWorkload } from './load.js';
import { detectPinning, startReference, startThreatcol } from './processes.js';
import { fmt, median, textTable } from './report.js';

const batched = process.argv.includes('--batched');
const nodes: 1 | 3 = process.argv.includes('--r3') ? 3 : 1;
const started = performance.now();
const log = (message: string) =>
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);
const pin = detectPinning();
const ctx: BenchContext = {
  quick: false,
  pin,
  worker: new LoadWorker(pin),
  seconds: Number(argValue('--seconds') ?? 4),
  pairs: Number(argValue('--pairs') ?? 3),
  warmupSeconds: 1,
  sendAvailable: false,
  log,
  runs: {},
};
const w = standardWorkload(batched ? 'generic' : 'firewall', ctx.seconds);
const what = batched ? 'batched /generic x100' : 'keep-alive /firewall, UTC sensor';
const root = mkdtempSync(join(tmpdir(), 'threatcol-nats-ab-'));
const cleanups: Cleanups = [];
const backends: NatsBackend[] = [];
const files = await startThreatcol('files', join(root, 'files'), pin);
const ref = await startReference('reference', files.certPath, files.keyPath, pin);
log(`${what}, ${nodes} node(s) R${nodes}, ${pin.reason}; ${ctx.pairs} rotations of ${ctx.seconds} s`);
try {
  const start = async (label: string, bin?: string) => {
    backends.push(await startNatsBackend(label, nodes, natsDataDir(root, label), pin, cleanups, [], bin));
  };
  for (const b of baseBuilds()) await start(`R${nodes} ${b.label}`, b.bin);
  await start(`R${nodes} after`);
  await ctx.worker.measure('autocannon', ref, files, { ...w, seconds: ctx.warmupSeconds });
  for (const s of [files, ...backends.map((b) => b.server)])
    await ctx.worker.measure('autocannon', s, s, { ...w, seconds: ctx.warmupSeconds });
  const rows = await natsRows(ctx, what, ref, files, backends, w);
  process.stdout.write(`${textTable(rows)}\n`);
  // Per record: the collector's CPU (from /proc, its process tree) and records per collector CPU-second.
  const runs = Object.values(ctx.runs)[0]?.threatcol ?? [];
  const by = (server: string) => runs.filter((m) => m.server === server);
  const perRecordUs = (ms: Measured[]) => median(ms.map((m) => (m.serverCpuSeconds / m.records) * 1e6));
  for (const label of ['files', ...backends.map((b) => b.label)]) {
    const ms = by(label);
    log(
      `  ${label}: ${ms.map((m) => fmt.n(m.recordsPerSecond)).join(' ')} rec/s; collector ${ms
        .map((m) => ((m.serverCpuSeconds / m.records) * 1e6).toFixed(1))
        .join(
          ' ',
        )} us/record (median ${perRecordUs(ms).toFixed(1)}, ${fmt.n(1e6 / perRecordUs(ms))} records per collector CPU-second)`,
    );
  }
  const after = by(backends.at(-1)?.label ?? '');
  for (const b of backends.slice(0, -1)) {
    const before = by(b.label);
    const pairRatio = (f: (m: Measured) => number) =>
      median(after.map((m, i) => f(m) / f(before[i] as Measured)));
    log(
      `  after/${b.label}: records/s ${fmt.x(pairRatio((m) => m.recordsPerSecond))}, collector CPU per record ${fmt.x(
        pairRatio((m) => m.serverCpuSeconds / m.records),
      )} (medians of the per-rotation ratios)`,
    );
  }
} finally {
  ctx.worker.close();
  for (const b of backends) await b.server.stop().catch(() => {});
  await ref.stop();
  await files.stop();
  await runCleanups(cleanups);
  rmSync(root, { recursive: true, force: true });
}
