// What the decisions engine costs ingest: threatcol with two blocklist rules (figure 17's) against none, same
// binary, keep-alive /firewall, the standard firewall bodies (distinct records, sources in 10/8, blockPrivate on
// so the rules count them). Both collectors are started once; runs alternate A B B A, short and many, and the
// first pair is a warm-up, not counted. Per run: requests per second, the server's CPU per request by thread
// (the main thread takes records, the engine has a thread of its own, libuv's pool does the fsyncs), and what
// the engine did per record it read: its thread's wake-ups, its cursor's saves (each written and fsynced), the
// process's bytes read. After each engine-on run the bench waits until the engine has read every record (its
// backlog is not left to take the core from the next run) and reports how long that took. Then, with the same
// load on the engine-on collector, a critical record from a new address every 0.3 s and its feed polled every
// 20 ms: how long from the record's 200 to its block in the feed (the guarantee is 1 s).
// Run: npm run build && flock /tmp/threatcol-bench.lock taskset -c 0 node --import tsx test/bench/decisions-ab.ts
// (AB_SECONDS, default 3; AB_PAIRS, default 10; AB_LATENCY_SECONDS, default 6, 0: none; --perf: the engine
// thread of the engine-on collector sampled by perf(1), its self time by symbol in µs per record; AB_BASE=
// OTHER-CHECKOUT/bin/threatcol: a third collector, engine on, of another build, in the same rotation: before
// and after a change in one run; AB_CPU_PROF=DIR: CPU profiles of both collectors, DIR/on and DIR/off).
import { type FSWatcher, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, watch } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { feedLatency } from './feed-latency.js';
import { engineConfig } from './figures-decisions.js';
import { payloadBodies } from './payloads.js';
import {
  detectPinning,
  keepAliveFirewallLoad,
  recordPerf,
  startThreatcol,
  type ThreatcolServer,
} from './processes.js';
import { median } from './report.js';

const SECONDS = Number(process.env.AB_SECONDS ?? 3);
const PAIRS = Number(process.env.AB_PAIRS ?? 10);
const LATENCY_SECONDS = Number(process.env.AB_LATENCY_SECONDS ?? 6);
const perf = process.argv.includes('--perf');
const CONNECTIONS = 16;
const pin = detectPinning();
const body = payloadBodies({ kind: 'firewall' });
const nextBody = () => body().toString();
/** The engine's thread, as /proc names it (thread names are cut at 15 characters). */
const ENGINE_COMM = 'threatcol decis';

interface Run {
  rps: number;
  cpuUsPerRequest: number;
  /** µs per request by thread name. */
  threads: Record<string, number>;
  /** Per record read by the engine: its thread's wake-ups, its cursor's saves, the process's bytes read. */
  wakeUpsPerRecord: number;
  recordsPerSave: number;
  bytesReadPerRequest: number;
  /** How long the engine took, once the load stopped, to read every record stored (0: none left). */
  catchUpMs: number;
}

interface ThreadStat {
  comm: string;
  seconds: number;
  switches: number;
}

/** Each thread of `pid`: its name, CPU seconds (user + system), and context switches (its wake-ups, nearly). */
function threads(pid: number): Map<string, ThreadStat> {
  const out = new Map<string, ThreadStat>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const count = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      out.set(tid, {
        comm: tid === String(pid) ? 'main' : comm,
        seconds: (Number(fields[11]) + Number(fields[12])) / 100,
        switches: count('voluntary_ctxt_switches') + count('nonvoluntary_ctxt_switches'),
      });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** Bytes the process read (read and pread calls, sockets included). */
function bytesRead(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
}

/** Bytes stored that the engine's cursor has not passed (the single writer's series). */
function engineBehind(dataDir: string): number {
  const threats = join(dataDir, 'threats');
  const segments = readdirSync(threats)
    .filter((f) => f.endsWith('.ndjson'))
    .sort();
  const newest = segments.at(-1);
  if (newest === undefined) return 0;
  let cursor: { series: Record<string, { file: string; offset: number }> };
  try {
    cursor = JSON.parse(readFileSync(join(dataDir, 'outputs', '@decisions.cursor.json'), 'utf8'));
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const at = cursor.series[''];
  const size = statSync(join(threats, newest)).size;
  return at?.file === newest ? size - at.offset : size;
}

/** Counts the saves of the engine's cursor (each one a rename over it), from the bench's own inotify watch. */
function cursorSaves(dataDir: string): { count(): number; stop(): void } {
  let saves = 0;
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(join(dataDir, 'outputs'), (event, file) => {
      if (event === 'rename' && file === '@decisions.cursor.json') saves++;
    });
  } catch {
    // No cursor yet (engine off): nothing to count.
  }
  return { count: () => saves, stop: () => watcher?.close() };
}

/** perf's self µs by symbol of the engine's thread, summed over the engine-on runs. */
const perfUs = new Map<string, number>();
let perfRecords = 0;

async function load(server: ThreatcolServer, engine: boolean): Promise<Run> {
  const t0 = threads(server.pid);
  const read0 = bytesRead(server.pid);
  const saves = cursorSaves(server.dataDir);
  const recording =
    perf && engine
      ? recordPerf(server.pid, join(server.dataDir, `perf-${Date.now()}.data`), ENGINE_COMM)
      : null;
  const r = await keepAliveFirewallLoad(server, { connections: CONNECTIONS, seconds: SECONDS, nextBody });
  const t1 = threads(server.pid);
  const read1 = bytesRead(server.pid);
  let catchUpMs = 0;
  if (engine) {
    const stopped = performance.now();
    while (engineBehind(server.dataDir) > 0 && performance.now() - stopped < 10_000)
      await new Promise((resolve) => setTimeout(resolve, 5));
    catchUpMs = performance.now() - stopped;
  }
  saves.stop();
  if (recording) {
    perfRecords += r.requests;
    for (const [symbol, us] of await recording.stop()) perfUs.set(symbol, (perfUs.get(symbol) ?? 0) + us);
  }
  const byThread: Record<string, number> = {};
  let engineSwitches = 0;
  for (const [tid, after] of t1) {
    const before = t0.get(tid);
    const us = ((after.seconds - (before?.seconds ?? 0)) / r.requests) * 1e6;
    byThread[after.comm] = (byThread[after.comm] ?? 0) + us;
    if (after.comm === ENGINE_COMM) engineSwitches += after.switches - (before?.switches ?? 0);
  }
  return {
    rps: r.rps,
    cpuUsPerRequest: r.cpuSecondsPerRequest * 1e6,
    threads: byThread,
    wakeUpsPerRecord: engineSwitches / r.requests,
    recordsPerSave: saves.count() > 0 ? r.requests / saves.count() : 0,
    bytesReadPerRequest: (read1 - read0) / r.requests,
    catchUpMs,
  };
}

const quantile = (values: number[], q: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const round = (n: number, digits = 0) => Number(n.toFixed(digits));
/** A spread as min, quartiles and max. */
const spread = (values: number[], digits = 3) => ({
  min: round(Math.min(...values), digits),
  q1: round(quantile(values, 0.25), digits),
  median: round(median(values), digits),
  q3: round(quantile(values, 0.75), digits),
  max: round(Math.max(...values), digits),
});

const dirs = {
  on: mkdtempSync(join(tmpdir(), 'threatcol-decisions-on-')),
  off: mkdtempSync(join(tmpdir(), 'threatcol-decisions-off-')),
  base: mkdtempSync(join(tmpdir(), 'threatcol-decisions-base-')),
};
const configPath = engineConfig(join(dirs.on, 'config.json'));
const BASE = process.env.AB_BASE;
type Which = 'on' | 'off' | 'base';
const results: Record<Which, Run[]> = { on: [], off: [], base: [] };
// JIT code named for perf (/tmp/perf-PID.map), code that stays where it was mapped, V8's log in the data dir.
const perfArgs = (which: Which) =>
  perf
    ? [
        '--perf-basic-prof',
        '--no-compact-code-space',
        `--logfile=${join(dirs[which], 'v8.log')}`,
        '--no-logfile-per-isolate',
      ]
    : [];
// AB_CPU_PROF=DIR: each collector's CPU profiles (main thread and engine thread) in DIR, for profile-diff.ts.
const profileDir = process.env.AB_CPU_PROF;
const profiled = (which: Which) => [
  ...perfArgs(which),
  ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}/${which}`] : []),
];
try {
  const load0 = loadavg()[0] as number;
  const servers: Partial<Record<Which, ThreatcolServer>> = {
    on: await startThreatcol('decisions-on', dirs.on, pin, {
      args: ['--config', configPath],
      nodeArgs: profiled('on'),
    }),
    off: await startThreatcol('decisions-off', dirs.off, pin, { nodeArgs: profiled('off') }),
    ...(BASE
      ? {
          base: await startThreatcol('decisions-base', dirs.base, pin, {
            bin: BASE,
            args: ['--config', configPath],
            nodeArgs: profiled('base'),
          }),
        }
      : {}),
  };
  const running = Object.entries(servers) as [Which, ThreatcolServer][];
  // Pair 0 warms both up (JIT, page cache, the engine's first scan) and is not counted.
  for (let i = 0; i <= PAIRS; i++) {
    const order = i % 2 === 0 ? running : [...running].reverse();
    for (const [which, server] of order) {
      const r = await load(server, which !== 'off');
      if (i > 0) results[which].push(r);
      process.stderr.write(
        `${i === 0 ? 'warm-up ' : ''}${which} ${Math.round(r.rps)} rps, ${Math.round(r.cpuUsPerRequest)} us/req (${Object.entries(
          r.threads,
        )
          .filter(([, us]) => us >= 1)
          .map(([name, us]) => `${name} ${us.toFixed(1)}`)
          .join(', ')})${
          which === 'off'
            ? ''
            : `, engine: ${r.wakeUpsPerRecord.toFixed(3)} wake-ups and ${(1 / r.recordsPerSave).toFixed(4)} cursor saves a record, caught up ${Math.round(r.catchUpMs)} ms after`
        }, read ${Math.round(r.bytesReadPerRequest)} B/req (load ${loadavg()[0]})\n`,
      );
    }
  }
  const latencies =
    LATENCY_SECONDS > 0
      ? await feedLatency(servers.on as ThreatcolServer, LATENCY_SECONDS, {
          connections: CONNECTIONS,
          nextBody,
        })
      : [];
  for (const [, server] of running) await server.stop();
  const row = (which: Which) => {
    const runs = results[which];
    const names = new Set(runs.flatMap((r) => Object.keys(r.threads)));
    return {
      rps: Math.round(median(runs.map((r) => r.rps))),
      cpuUsPerRequest: Math.round(median(runs.map((r) => r.cpuUsPerRequest))),
      cpuUsPerRequestByThread: Object.fromEntries(
        [...names]
          .map((name) => [name, round(median(runs.map((r) => r.threads[name] ?? 0)), 1)] as const)
          .filter(([, us]) => us >= 0.5),
      ),
      bytesReadPerRequest: Math.round(median(runs.map((r) => r.bytesReadPerRequest))),
      ...(which === 'off'
        ? {}
        : {
            engineWakeUpsPerRecord: round(median(runs.map((r) => r.wakeUpsPerRecord)), 4),
            recordsPerCursorSave: Math.round(median(runs.map((r) => r.recordsPerSave))),
            catchUpMs: spread(
              runs.map((r) => r.catchUpMs),
              0,
            ),
          }),
    };
  };
  const ratios = (which: Which, k: 'rps' | 'cpuUsPerRequest') =>
    results[which].map((r, i) => r[k] / (results.off[i] as Run)[k]);
  const base = BASE ? row('base') : null;
  process.stdout.write(
    `${JSON.stringify(
      {
        pin: pin.reason,
        loadAverage: { before: load0, after: loadavg()[0] },
        secondsPerRun: SECONDS,
        pairs: PAIRS,
        engineOff: row('off'),
        engineOn: row('on'),
        rpsRatioOnToOff: spread(ratios('on', 'rps')),
        cpuRatioOnToOff: spread(ratios('on', 'cpuUsPerRequest')),
        pairRatios: ratios('on', 'rps').map((r) => round(r, 3)),
        ...(base
          ? {
              engineOnBase: base,
              baseRpsRatioOnToOff: spread(ratios('base', 'rps')),
              baseCpuRatioOnToOff: spread(ratios('base', 'cpuUsPerRequest')),
            }
          : {}),
        ...(latencies.length > 0
          ? {
              feedLatencyMs: {
                probes: latencies.length,
                median: Math.round(median(latencies)),
                p90: Math.round(quantile(latencies, 0.9)),
                max: Math.round(Math.max(...latencies)),
              },
            }
          : {}),
        ...(perf
          ? {
              engineThreadPerfUsPerRecord: [...perfUs]
                .map(([symbol, us]) => ({ symbol, us: round(us / perfRecords, 2) }))
                .sort((a, b) => b.us - a.us)
                .slice(0, 40),
            }
          : {}),
        target: 'rps on/off >= 0.95; a block in the feed within 1 s',
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(dirs.on, { recursive: true, force: true });
  rmSync(dirs.off, { recursive: true, force: true });
  rmSync(dirs.base, { recursive: true, force: true });
}
