// Figure 16: the bundled runtime (the one package-lock.json pins, node_modules/.bin/node) beside other Node
// runtimes on the same box in the same minutes: keep-alive ingest of distinct records (dedupe on as shipped, a
// sensor in a time zone), rounds rotating the runtimes (order reversed every other round), server CPU per record,
// RSS after start and under load, and `sensor list` start-up, alternated run by run. Ratios: bundled / other.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { cleanEnv } from '../helpers/cli.js';
import { cpuMicrosPerRequest, type LoadWorker, type Measured, standardWorkload } from './load.js';
import {
  BIN,
  memory,
  type Pinning,
  pinned,
  ROOT,
  startThreatcol,
  type ThreatcolServer,
  zonedSensor,
} from './processes.js';
import { fmt, median, type Row } from './report.js';

export interface Runtime {
  label: string;
  /** Path of the node binary. */
  node: string;
  version: string;
}

export interface RuntimeRun {
  label: string;
  version: string;
  rssAfterStart: number;
  rssUnderLoad: number;
  rounds: Measured[];
  startupMs: number[];
}

const ZONE = 'Europe/Berlin';

export function runtimeAt(label: string, node: string): Runtime {
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${node} --version failed: ${r.stderr || r.error?.message}`);
  return { label, node, version: r.stdout.trim() };
}

/**
 * The machine's own `node` (the first on PATH outside any node_modules/.bin, which npm scripts put first), when
 * it is another binary than the one running this: the runtime threatcol ran on before it bundled its own.
 */
export function machineRuntime(): Runtime | null {
  const self = realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const candidate = join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      if (realpathSync(candidate) === self) return null;
      return runtimeAt('machine', candidate);
    } catch {
      // not here
    }
  }
  return null;
}

/** Wall time of `node BIN args` from spawn to exit, in ms. */
function timeCli(node: string, args: string[], cpu: string): Promise<number> {
  const { cmd, args: argv } = pinned(cpu, [BIN, ...args], node);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, argv, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('close', (code) => {
      if (code === 0) resolve(performance.now() - t0);
      else reject(new Error(`${node} ${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`));
    });
  });
}

/** Reversed every other round: no runtime always runs first or last. */
const order = <T>(items: T[], round: number): T[] => (round % 2 === 0 ? items : [...items].reverse());

/** The measurements behind figure 16 (also test/bench/runtime-ab.ts's). */
export async function measureRuntimes(options: {
  runtimes: Runtime[];
  root: string;
  pin: Pinning;
  worker: LoadWorker;
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  startupRuns: number;
  log: (message: string) => void;
}): Promise<RuntimeRun[]> {
  const { runtimes, pin, worker } = options;
  const w = standardWorkload('firewall', options.seconds);
  const servers: { runtime: Runtime; server: ThreatcolServer; auth: ThreatcolServer; run: RuntimeRun }[] = [];
  try {
    for (const [i, runtime] of runtimes.entries()) {
      const dataDir = join(options.root, `runtime-${i}`);
      mkdirSync(dataDir, { recursive: true });
      const server = await startThreatcol(`threatcol on ${runtime.label}`, dataDir, pin, {
        node: runtime.node,
        env: { THREATCOL_DEDUPE_WINDOW_SECONDS: '120' },
      });
      const auth = await zonedSensor(server, ZONE);
      const run: RuntimeRun = {
        label: runtime.label,
        version: runtime.version,
        rssAfterStart: memory(server.pid).rss,
        rssUnderLoad: 0,
        rounds: [],
        startupMs: [],
      };
      servers.push({ runtime, server, auth, run });
    }
    for (const s of servers)
      await worker.measure('autocannon', s.server, s.auth, { ...w, seconds: options.warmupSeconds });
    for (let round = 0; round < options.rounds; round++) {
      for (const s of order(servers, round)) {
        const m = await worker.measure('autocannon', s.server, s.auth, w);
        if (m.non2xx > 0 || m.errors > 0)
          options.log(`    ${s.runtime.label}: ${m.non2xx} non-2xx, ${m.errors} errors`);
        s.run.rounds.push(m);
        s.run.rssUnderLoad = Math.max(s.run.rssUnderLoad, m.serverRss);
      }
    }
    for (const s of servers)
      options.log(
        `  ${s.runtime.label} (${s.runtime.version}): ${s.run.rounds.map((m) => fmt.n(m.recordsPerSecond)).join(' ')} rec/s`,
      );
  } finally {
    for (const s of servers) await s.server.stop().catch(() => {});
  }
  // Start-up once the servers are gone: `sensor list` of the first data dir (two sensors), runtimes alternated.
  const cpu = pin.pinned ? pin.loadCpu : '';
  const args = ['sensor', 'list', '--data-dir', join(options.root, 'runtime-0')];
  for (const s of servers) await timeCli(s.runtime.node, args, cpu); // cold page cache, unmeasured
  for (let i = 0; i < options.startupRuns; i++) {
    for (const s of order(servers, i)) s.run.startupMs.push(await timeCli(s.runtime.node, args, cpu));
  }
  return servers.map((s) => s.run);
}

const perRound = (a: RuntimeRun, b: RuntimeRun, pick: (m: Measured) => number) =>
  median(a.rounds.map((m, i) => pick(m) / pick(b.rounds[i] as Measured)));
const perRun = (a: number[], b: number[]) => median(a.map((v, i) => v / (b[i] as number)));
/** One /firewall record per request: CPU per request is CPU per record. */
const cpuPerRecord = cpuMicrosPerRequest;

/** Rows of `bundled` against each other run: ratios of the same round (ingest) or the same pair (start-up). */
export function runtimeRows(bundled: RuntimeRun, others: RuntimeRun[]): Row[] {
  const rows: Row[] = [];
  for (const o of others) {
    const vs = `${bundled.version} vs ${o.version}`;
    const rps = (r: RuntimeRun) => median(r.rounds.map((m) => m.recordsPerSecond));
    const cpu = (r: RuntimeRun) => median(r.rounds.map(cpuPerRecord));
    rows.push(
      {
        figure: `16 runtime ${vs}: keep-alive /firewall, dedupe on, sensor in ${ZONE}, req/s`,
        generator: `${bundled.rounds.length} rounds`,
        threatcol: fmt.n(rps(bundled)),
        reference: fmt.n(rps(o)),
        ratio: fmt.x(perRound(bundled, o, (m) => m.recordsPerSecond)),
        target: 'report (bundled / other, per round)',
        pass: null,
      },
      {
        figure: `16 runtime ${vs}: server CPU per record`,
        generator: `${bundled.rounds.length} rounds`,
        threatcol: `${fmt.n(cpu(bundled))} us`,
        reference: `${fmt.n(cpu(o))} us`,
        ratio: fmt.x(perRound(bundled, o, cpuPerRecord)),
        target: 'report (bundled / other, per round)',
        pass: null,
      },
      {
        figure: `16 runtime ${vs}: RSS after start`,
        generator: '-',
        threatcol: fmt.mb(bundled.rssAfterStart),
        reference: fmt.mb(o.rssAfterStart),
        ratio: fmt.x(bundled.rssAfterStart / o.rssAfterStart),
        target: 'report',
        pass: null,
      },
      {
        figure: `16 runtime ${vs}: RSS under load (highest after a round)`,
        generator: '-',
        threatcol: fmt.mb(bundled.rssUnderLoad),
        reference: fmt.mb(o.rssUnderLoad),
        ratio: fmt.x(bundled.rssUnderLoad / o.rssUnderLoad),
        target: 'report',
        pass: null,
      },
      {
        figure: `16 runtime ${vs}: \`sensor list\` start-up to exit`,
        generator: `${bundled.startupMs.length} pairs`,
        threatcol: fmt.ms(median(bundled.startupMs)),
        reference: fmt.ms(median(o.startupMs)),
        ratio: fmt.x(perRun(bundled.startupMs, o.startupMs)),
        target: 'report (bundled / other, per pair)',
        pass: null,
      },
    );
  }
  return rows;
}

/**
 * Figure 16 in `npm run bench`: this runtime (the bundled one, when run by npm) beside the machine's `node`, when
 * there is another; no rows without one.
 */
export async function runtimeFigure(
  ctx: { quick: boolean; pin: Pinning; worker: LoadWorker; log: (message: string) => void },
  root: string,
): Promise<{ rows: Row[]; runs: RuntimeRun[] }> {
  const other = machineRuntime();
  if (other === null) {
    ctx.log('  skipped: the only node on PATH is the one running the benchmark');
    return { rows: [], runs: [] };
  }
  const self = runtimeAt('bundled', process.execPath);
  ctx.log(`  ${self.version} (${self.node}) beside ${other.version} (${other.node})`);
  const runs = await measureRuntimes({
    runtimes: [self, other],
    root,
    pin: ctx.pin,
    worker: ctx.worker,
    rounds: ctx.quick ? 2 : 4,
    seconds: ctx.quick ? 1 : 6,
    warmupSeconds: ctx.quick ? 0.5 : 2,
    startupRuns: ctx.quick ? 5 : 21,
    log: ctx.log,
  });
  const [first, ...rest] = runs;
  return { rows: first ? runtimeRows(first, rest) : [], runs };
}
