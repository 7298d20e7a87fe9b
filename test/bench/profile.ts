// `node --import tsx test/bench/profile.ts [firewall|generic] [seconds] [--no-prof] [--nats] [--bound] [--utc]`:
// one threatcol server (a sensor in Europe/Berlin, --utc: a UTC one; --nats: on one nats-server node, a UTC
// sensor) and the reference (--bound: and the measured bound, bound-server.mjs) under the benchmark's
// keep-alive load, alternated, with threatcol's CPU profile written to test/bench/results/profiles/ for
// `profile-summary.ts`.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Cleanups, runCleanups, startNatsBackend } from './figures-nats.js';
import { cpuMicrosPerRequest, LoadWorker, type Measured, standardWorkload } from './load.js';
import {
  detectPinning,
  ROOT,
  type ServerUnderTest,
  startBound,
  startReference,
  startThreatcol,
  zonedSensor,
} from './processes.js';
import { median } from './report.js';

const kind = process.argv[2] === 'generic' ? 'generic' : 'firewall';
const seconds = Number(process.argv[3] ?? 3);
const prof = !process.argv.includes('--no-prof');
const nats = process.argv.includes('--nats');
const withBound = process.argv.includes('--bound');
const utc = process.argv.includes('--utc');
const pin = detectPinning();
const dir = join(ROOT, 'test/bench/results/profiles');
mkdirSync(dir, { recursive: true });
const root = mkdtempSync(join(tmpdir(), 'threatcol-profile-'));
const worker = new LoadWorker(pin);
const w = standardWorkload(kind, seconds);
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
const zoned = nats || utc ? tc : await zonedSensor(tc, 'Europe/Berlin');
let bound: ServerUnderTest | null = null;
if (withBound) {
  mkdirSync(join(root, 'bound'));
  bound = await startBound('bound', tc.certPath, tc.keyPath, join(root, 'bound'), pin);
}
try {
  await worker.measure('autocannon', tc, zoned, { ...w, seconds: 1 });
  await worker.measure('autocannon', ref, zoned, { ...w, seconds: 1 });
  if (bound) await worker.measure('autocannon', bound, zoned, { ...w, seconds: 1 });
  const r: Measured[] = [];
  const t: Measured[] = [];
  const b: Measured[] = [];
  for (let i = 0; i < 3; i++) {
    r.push(await worker.measure('autocannon', ref, zoned, w));
    if (bound) b.push(await worker.measure('autocannon', bound, zoned, w));
    t.push(await worker.measure('autocannon', tc, zoned, w));
  }
  const us = (ms: Measured[]) => median(ms.map(cpuMicrosPerRequest));
  const rate = (ms: Measured[]) => median(ms.map((m) => m.recordsPerSecond));
  const perCpu = (ms: Measured[]) => median(ms.map((m) => m.records / m.serverCpuSeconds));
  const out = {
    kind,
    backend: nats ? 'nats' : 'files',
    ref: { rate: rate(r), cpuUs: us(r), perCpuSecond: perCpu(r), cores: median(r.map((m) => m.serverCores)) },
    ...(bound
      ? {
          bound: {
            rate: rate(b),
            cpuUs: us(b),
            perCpuSecond: perCpu(b),
            cores: median(b.map((m) => m.serverCores)),
            p99: median(b.map((m) => m.latencyMs.p99)),
          },
          // threatcol against the bound, per alternation: records/s and CPU per request.
          vsBound: {
            rate: median(t.map((m, i) => m.recordsPerSecond / (b[i] as Measured).recordsPerSecond)),
            cpu: median(
              t.map(
                (m, i) =>
                  m.serverCpuSeconds /
                  Math.max(1, m.requests) /
                  ((b[i] as Measured).serverCpuSeconds / Math.max(1, (b[i] as Measured).requests)),
              ),
            ),
          },
        }
      : {}),
    tc: { rate: rate(t), cpuUs: us(t), perCpuSecond: perCpu(t), cores: median(t.map((m) => m.serverCores)) },
    ratio: median(t.map((m, i) => m.recordsPerSecond / (r[i] as Measured).recordsPerSecond)),
    non2xx: t.reduce((n, m) => n + m.non2xx + m.errors, 0),
    p99: { ref: median(r.map((m) => m.latencyMs.p99)), tc: median(t.map((m) => m.latencyMs.p99)) },
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  worker.close();
  await ref.stop();
  await bound?.stop();
  await tc.stop();
  await runCleanups(cleanups);
  rmSync(root, { recursive: true, force: true });
}
