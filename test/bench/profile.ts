// `node --import tsx test/bench/profile.ts [firewall|generic] [seconds] [--no-prof] [--nats]`: one threatcol
// server (a sensor in Europe/Berlin; --nats: on one nats-server node, a UTC sensor) and the reference under
// the benchmark's keep-alive load, A B A B, with threatcol's CPU profile written to
// test/bench/results/profiles/ for `profile-summary.ts`.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Cleanups, runCleanups, startNatsBackend } from './figures-nats.js';
import { LoadWorker, type Measured, type Workload } from './load.js';
import { detectPinning, ROOT, startReference, startThreatcol, zonedSensor } from './processes.js';
import { median } from './report.js';

const kind = process.argv[2] === 'generic' ? 'generic' : 'firewall';
const seconds = Number(process.argv[3] ?? 3);
const prof = !process.argv.includes('--no-prof');
const nats = process.argv.includes('--nats');
const pin = detectPinning();
const dir = join(ROOT, 'test/bench/results/profiles');
mkdirSync(dir, { recursive: true });
const root = mkdtempSync(join(tmpdir(), 'threatcol-profile-'));
const worker = new LoadWorker(pin);
const w: Workload =
  kind === 'firewall'
    ? { path: '/firewall', payload: { kind: 'firewall' }, recordsPerRequest: 1, connections: 50, seconds }
    : {
        path: '/generic',
        payload: { kind: 'generic', records: 100 },
        recordsPerRequest: 100,
        connections: 50,
        seconds,
      };
// PROFILE_NODE_ARGS: extra node flags for threatcol only (e.g. GC settings to try).
const extra = (process.env.PROFILE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const nodeArgs = prof
  ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${kind}-${Date.now()}.cpuprofile`]
  : [];
const cleanups: Cleanups = [];
const tc = nats
  ? (await startNatsBackend('threatcol', 1, join(root, 'tc'), pin, cleanups, [...extra, ...nodeArgs])).server
  : await startThreatcol('threatcol', join(root, 'tc'), pin, { nodeArgs: [...extra, ...nodeArgs] });
const ref = await startReference('reference', tc.certPath, tc.keyPath, pin);
// zonedSensor adds through the files registry: a NATS-backed collector keeps its own (UTC) sensor.
const zoned = nats ? tc : await zonedSensor(tc, 'Europe/Berlin');
try {
  await worker.measure('autocannon', tc, zoned, { ...w, seconds: 1 });
  await worker.measure('autocannon', ref, zoned, { ...w, seconds: 1 });
  const r: Measured[] = [];
  const t: Measured[] = [];
  for (let i = 0; i < 3; i++) {
    r.push(await worker.measure('autocannon', ref, zoned, w));
    t.push(await worker.measure('autocannon', tc, zoned, w));
  }
  const us = (ms: Measured[]) => median(ms.map((m) => (m.serverCpuSeconds / Math.max(1, m.requests)) * 1e6));
  const rate = (ms: Measured[]) => median(ms.map((m) => m.recordsPerSecond));
  const perCpu = (ms: Measured[]) => median(ms.map((m) => m.records / m.serverCpuSeconds));
  const out = {
    kind,
    backend: nats ? 'nats' : 'files',
    ref: { rate: rate(r), cpuUs: us(r), perCpuSecond: perCpu(r), cores: median(r.map((m) => m.serverCores)) },
    tc: { rate: rate(t), cpuUs: us(t), perCpuSecond: perCpu(t), cores: median(t.map((m) => m.serverCores)) },
    ratio: median(t.map((m, i) => m.recordsPerSecond / (r[i] as Measured).recordsPerSecond)),
    non2xx: t.reduce((n, m) => n + m.non2xx + m.errors, 0),
    p99: { ref: median(r.map((m) => m.latencyMs.p99)), tc: median(t.map((m) => m.latencyMs.p99)) },
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  worker.close();
  await ref.stop();
  await tc.stop();
  await runCleanups(cleanups);
  rmSync(root, { recursive: true, force: true });
}
