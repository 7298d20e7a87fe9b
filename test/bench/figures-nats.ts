// Figure 8: the NATS JetStream backend (one node, replicas 1; three routed nodes, replicas 3) beside the files
// backend and the reference, rotated in the same run; threatcol's CPU and nats-server's CPU counted apart.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { post, trustingAgent } from '../helpers/client.js';
import { type NatsNode, startNatsCluster, startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import type { BenchContext } from './figures-load.js';
import type { Measured, Workload } from './load.js';
import {
  cpuSeconds,
  type Pinning,
  type ServerUnderTest,
  startThreatcol,
  type ThreatcolServer,
} from './processes.js';
import { fmt, median, type Row } from './report.js';

/** A collector on a NATS backend and the nats-server processes behind it. */
export interface NatsBackend {
  label: string;
  server: ThreatcolServer;
  natsPids: number[];
}

/** Cleanups the nats-server helpers register (their `t.after`), run last first by `runCleanups`. */
export type Cleanups = Array<() => void | Promise<void>>;

export async function runCleanups(cleanups: Cleanups): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => {});
}

/**
 * Starts `nodes` nats-server processes (1: standalone; 3: routed on loopback) and `threatcol serve` on them
 * with stream replicas `nodes`. The nats-servers share the server core with threatcol: the load core stays
 * the load generators' alone, so every row has the same client capacity.
 */
export async function startNatsBackend(
  label: string,
  nodes: 1 | 3,
  dataDir: string,
  pin: Pinning,
  cleanups: Cleanups,
  nodeArgs: string[] = [],
  /** Another build's bin/threatcol (test/bench/nats-ab.ts: before and after in one run). */
  bin?: string,
  /** More `serve` arguments (profile-outputs.ts: `--config` with an output). */
  args: string[] = [],
): Promise<NatsBackend> {
  const t = { after: (fn: () => void | Promise<void>) => void cleanups.push(fn) };
  const natsNodes: NatsNode[] =
    nodes === 1 ? [await startNatsServer(t)] : (await startNatsCluster(t, 3)).nodes;
  const natsPids = natsNodes.map((n) => natsPid(n.storeDir));
  if (pin.pinned)
    for (const pid of natsPids) execFileSync('taskset', ['-a', '-p', '-c', pin.serverCpu, String(pid)]);
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_SERVERS: natsNodes.map((n) => n.url).join(','),
    THREATCOL_NATS_REPLICAS: String(nodes),
  };
  const server = await startThreatcol(label, dataDir, pin, { env, nodeArgs, args, ...(bin ? { bin } : {}) });
  await untilStored(server);
  return { label, server, natsPids };
}

/** The nats-server whose command line names this store directory (the helper does not expose pids). */
function natsPid(storeDir: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes(storeDir) && argv.some((a) => a.endsWith('nats-server'))) return Number(entry);
    } catch {
      // exited meanwhile
    }
  }
  throw new Error(`no nats-server process with store ${storeDir}`);
}

/**
 * Until one record is answered 200: the sensor is added through the KV bucket after `serve` listens, and the
 * collector learns of it from its watch, so the first requests may be refused.
 */
async function untilStored(server: ThreatcolServer): Promise<void> {
  const agent = trustingAgent(server.dataDir);
  const deadline = Date.now() + 30_000;
  try {
    for (;;) {
      const r = await post(server.url, '/generic', genericRecord(), {
        agent,
        sensor: server.sensor,
        key: server.key,
      }).catch((error: Error) => ({ status: 0, text: error.message }));
      if (r.status === 200) return;
      // 401 until the collector's watch has seen the new sensor; 503 until the stream is ready.
      if ((r.status !== 401 && r.status !== 503 && r.status !== 0) || Date.now() > deadline)
        throw new Error(`${server.name} answers ${r.status}: ${r.text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await agent.close();
  }
}

/** A run on a NATS backend, with the CPU seconds its nats-server processes (all nodes) used over it. */
interface NatsMeasured extends Measured {
  natsServerCpuSeconds: number;
}

interface Rotation {
  reference: Measured[];
  files: Measured[];
  nats: Map<string, NatsMeasured[]>;
}

const rate = (ms: Measured[]) => median(ms.map((m) => m.recordsPerSecond));
const usPerRequest = (cpu: number, m: Measured) => (cpu / Math.max(1, m.requests)) * 1e6;
const cpuPerRequest = (ms: Measured[]) => median(ms.map((m) => usPerRequest(m.serverCpuSeconds, m)));
/** Median of the per-rotation ratios a[i] / b[i]. */
const ratio = (a: number[], b: number[]) => median(a.map((v, i) => v / (b[i] as number)));

/**
 * Reference, files, then each NATS backend, `ctx.pairs` rotations of autocannon on workload `w`. Rows:
 * records/s (ratios to the reference and to files), threatcol's CPU per request (ref/x and files/x, as the
 * other CPU rows), and nats-server's CPU per request summed over its nodes.
 */
export async function natsRows(
  ctx: BenchContext,
  what: string,
  ref: ServerUnderTest,
  files: ThreatcolServer,
  backends: NatsBackend[],
  w: Workload,
): Promise<Row[]> {
  const r: Rotation = { reference: [], files: [], nats: new Map() };
  for (const b of backends) r.nats.set(b.label, []);
  for (let i = 0; i < ctx.pairs; i++) {
    r.reference.push(await ctx.worker.measure('autocannon', ref, files, w));
    r.files.push(await ctx.worker.measure('autocannon', files, files, w));
    for (const b of backends) {
      const natsCpu = () => b.natsPids.reduce((s, pid) => s + cpuSeconds(pid), 0);
      const before = natsCpu();
      const m = await ctx.worker.measure('autocannon', b.server, b.server, w);
      r.nats.get(b.label)?.push({ ...m, natsServerCpuSeconds: natsCpu() - before });
    }
  }
  const show = (ms: Measured[]) => ms.map((m) => fmt.n(m.recordsPerSecond)).join(' ');
  ctx.log(
    `  ${what}: ref ${show(r.reference)} | files ${show(r.files)} | ${[...r.nats]
      .map(([label, s]) => `${label} ${show(s)}`)
      .join(' | ')} rec/s`,
  );
  for (const m of [...r.reference, ...r.files, ...[...r.nats.values()].flat()]) {
    if (m.non2xx > 0 || m.errors > 0) ctx.log(`    ${m.server}: ${m.non2xx} non-2xx, ${m.errors} errors`);
  }
  ctx.runs[`8 ${what} [autocannon]`] = {
    reference: r.reference,
    threatcol: [...r.files, ...[...r.nats.values()].flat()],
    ratios: [],
  };

  const recs = (ms: Measured[]) => ms.map((m) => m.recordsPerSecond);
  const cpus = (ms: Measured[]) => ms.map((m) => usPerRequest(m.serverCpuSeconds, m));
  const rows: Row[] = [
    {
      figure: `8 ${what}, files backend, records/s`,
      generator: 'autocannon',
      threatcol: fmt.n(rate(r.files)),
      reference: fmt.n(rate(r.reference)),
      ratio: fmt.x(ratio(recs(r.files), recs(r.reference))),
      target: 'report',
      pass: null,
    },
    {
      figure: `8 ${what}, files backend: threatcol CPU per request`,
      generator: 'autocannon',
      threatcol: `${fmt.n(cpuPerRequest(r.files))} us`,
      reference: `${fmt.n(cpuPerRequest(r.reference))} us`,
      ratio: fmt.x(ratio(cpus(r.reference), cpus(r.files))),
      target: 'report',
      pass: null,
    },
  ];
  for (const [label, runs] of r.nats) {
    rows.push({
      figure: `8 ${what}, ${label}, records/s`,
      generator: 'autocannon',
      threatcol: fmt.n(rate(runs)),
      reference: `${fmt.n(rate(r.reference))}; files ${fmt.n(rate(r.files))}`,
      ratio: `${fmt.x(ratio(recs(runs), recs(r.reference)))}; ${fmt.x(ratio(recs(runs), recs(r.files)))} files`,
      target: 'report',
      pass: null,
    });
    rows.push({
      figure: `8 ${what}, ${label}: threatcol CPU per request`,
      generator: 'autocannon',
      threatcol: `${fmt.n(cpuPerRequest(runs))} us`,
      reference: `${fmt.n(cpuPerRequest(r.reference))}; files ${fmt.n(cpuPerRequest(r.files))} us`,
      ratio: `${fmt.x(ratio(cpus(r.reference), cpus(runs)))}; ${fmt.x(ratio(cpus(r.files), cpus(runs)))} files`,
      target: 'report',
      pass: null,
    });
    const natsUs = runs.map((m) => usPerRequest(m.natsServerCpuSeconds, m));
    const totalUs = runs.map((m) => usPerRequest(m.serverCpuSeconds + m.natsServerCpuSeconds, m));
    rows.push({
      figure: `8 ${what}, ${label}: nats-server CPU per request (all nodes)`,
      generator: 'autocannon',
      threatcol: `${fmt.n(median(natsUs))} us`,
      reference: `threatcol + nats ${fmt.n(median(totalUs))} us`,
      ratio: '',
      target: 'report',
      pass: null,
    });
  }
  return rows;
}

export function natsDataDir(root: string, label: string): string {
  return join(root, label.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase());
}
