// What the country and AS enrichment costs on the hot path: threatcol with enrich on (the default) against
// enrich off, same binary, alternated A B A B, keep-alive /firewall, one distinct record per request whose
// source is a distinct public address (no look-up is answered from the cache of recent addresses: its full
// cost), plus the look-ups per second of the shipped databases in one process and the memory they take.
// Run: npm run build && flock /tmp/threatcol-bench.lock node --expose-gc --import tsx test/bench/enrich-ab.ts
// (--quick: 2 s runs, 2 pairs; --cpu-prof: both servers' CPU profiles in test/bench/results/profiles/, compared
// function by function per request with test/bench/profile-diff.ts). Target: on/off requests per second >= 0.97.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startEnricher } from '../../src/enrich/enricher.js';
import { firewallRecord } from './payloads.js';
import {
  detectPinning,
  keepAliveFirewallLoad,
  memory,
  ROOT,
  recordPerf,
  startThreatcol,
  type ThreatcolServer,
} from './processes.js';
import { median, medianInterval } from './report.js';

const quick = process.argv.includes('--quick');
// --perf: each measured run sampled by perf(1) (the main thread, kernel included, JIT code named), self time by symbol compared.
const perf = process.argv.includes('--perf');
const profiles = process.argv.includes('--cpu-prof') ? join(ROOT, 'test/bench/results/profiles') : null;
const SECONDS = Number(process.env.AB_SECONDS ?? (quick ? 2 : 5));
const PAIRS = Number(process.env.AB_PAIRS ?? (quick ? 2 : 3));
const CONNECTIONS = 16;
const pin = detectPinning();
const base = firewallRecord();
let serial = 0;

/** The n-th of a walk over public IPv4 space (first octets 1-223 but 10, 100, 127, 169, 172, 192, 198, 203). */
const SKIP = new Set([10, 100, 127, 169, 172, 192, 198, 203]);
const FIRST = Array.from({ length: 223 }, (_, i) => i + 1).filter((o) => !SKIP.has(o));
function publicAddress(n: number): string {
  const x = Math.imul(n, 2_654_435_761) >>> 0;
  return `${FIRST[x % FIRST.length]}.${(x >>> 8) & 255}.${(x >>> 16) & 255}.${(n & 253) + 1}`;
}

/** A distinct record per request, from a distinct public source. */
function nextBody(): string {
  serial += 1;
  return JSON.stringify({ ...base, sport: serial % 65_536, src: publicAddress(serial) });
}

/** CPU seconds of each of `pid`'s threads, summed by thread name (node's own: node, libuv-worker, V8 workers...). */
function threadSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** µs per request by thread name, summed over the measured runs. */
const byThread = { on: new Map<string, number>(), off: new Map<string, number>() };

/** perf's self µs per request by symbol, summed over the runs. */
const perfSamples = { on: new Map<string, number>(), off: new Map<string, number>() };

/** Requests each server answered, warm-up included (what a CPU profile covers). */
const answered = { on: 0, off: 0 };

async function load(which: 'on' | 'off'): Promise<{ rps: number; cpuUsPerRequest: number }> {
  const t0 = threadSeconds(servers[which].pid);
  const recording = perf
    ? recordPerf(servers[which].pid, join(dirs[which], `perf-${Date.now()}.data`), 'node-MainThread')
    : null;
  const r = await keepAliveFirewallLoad(servers[which], {
    connections: CONNECTIONS,
    seconds: SECONDS,
    nextBody,
  });
  if (recording)
    for (const [symbol, us] of await recording.stop())
      perfSamples[which].set(symbol, (perfSamples[which].get(symbol) ?? 0) + us / r.requests);
  answered[which] += r.requests;
  for (const [name, s] of threadSeconds(servers[which].pid)) {
    const us = ((s - (t0.get(name) ?? 0)) * 1e6) / r.requests;
    byThread[which].set(name, (byThread[which].get(name) ?? 0) + us);
  }
  return { rps: r.rps, cpuUsPerRequest: r.cpuSecondsPerRequest * 1e6 };
}

/** Look-ups per second of distinct public addresses (country and AS), in this process; and the heap they take. */
function lookUps(): { perSecond: number; heapMB: number; loadMs: number } {
  globalThis.gc?.();
  const heap0 = process.memoryUsage();
  const t0 = performance.now();
  const enricher = startEnricher(
    { enabled: true, countryDb: '', asnDb: '', maxAgeDays: 180 },
    { logger: pino({ level: 'silent' }), pollIntervalMs: 3_600_000 },
  );
  const loadMs = performance.now() - t0;
  // What stays (the decompressed file is garbage once read): exact with --expose-gc.
  globalThis.gc?.();
  const heap1 = process.memoryUsage();
  const n = quick ? 200_000 : 1_000_000;
  const addresses = Array.from({ length: 10_000 }, (_, i) => publicAddress(i * 7919 + 1));
  for (let i = 0; i < 100_000; i++) enricher.lookUp(addresses[i % addresses.length] as string); // warm-up
  const t = performance.now();
  // Every look-up searches both tables.
  for (let i = 0; i < n; i++) enricher.lookUp(addresses[i % addresses.length] as string);
  const perSecond = n / ((performance.now() - t) / 1000);
  enricher.stop();
  const mb = (k: 'heapUsed' | 'arrayBuffers' | 'external') => heap1[k] - heap0[k];
  return {
    perSecond: Math.round(perSecond),
    heapMB: Number(((mb('heapUsed') + mb('external')) / 2 ** 20).toFixed(1)),
    loadMs: Math.round(loadMs),
  };
}

const dirs = {
  on: mkdtempSync(join(tmpdir(), 'threatcol-enrich-on-')),
  off: mkdtempSync(join(tmpdir(), 'threatcol-enrich-off-')),
};
const stamp = Date.now();
if (profiles) mkdirSync(profiles, { recursive: true });
const start = (which: 'on' | 'off') =>
  startThreatcol(`enrich-${which}`, dirs[which], pin, {
    env: { THREATCOL_ENRICH_ENABLED: which === 'on' ? 'true' : 'false' },
    nodeArgs: [
      ...(profiles
        ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`, `--cpu-prof-name=enrich-${which}-${stamp}.cpuprofile`]
        : []),
      // JIT code named for perf (/tmp/perf-PID.map), code that stays where it was mapped, V8's log out of the way.
      ...(perf
        ? [
            '--perf-basic-prof',
            '--no-compact-code-space',
            `--logfile=${join(dirs[which], 'v8.log')}`,
            '--no-logfile-per-isolate',
          ]
        : []),
    ],
  });
let servers: Record<'on' | 'off', ThreatcolServer>;
const results: Record<'on' | 'off', { rps: number; cpuUsPerRequest: number }[]> = { on: [], off: [] };
try {
  const load0 = loadavg()[0] as number;
  servers = { on: await start('on'), off: await start('off') };
  // Resident memory (MB) once started, and after the runs: what the loaded tables add to a serving process.
  const mb = (which: 'on' | 'off') => {
    const m = memory(servers[which].pid);
    return { rss: Math.round(m.rss / 2 ** 20), peak: Math.round(m.peak / 2 ** 20) };
  };
  const rssStarted = { on: mb('on'), off: mb('off') };
  await load('on'); // warm-up, both
  await load('off');
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
    for (const which of order) results[which].push(await load(which));
  }
  const rssAfter = { on: mb('on'), off: mb('off') };
  await servers.on.stop();
  await servers.off.stop();
  const row = (which: 'on' | 'off') => ({
    rps: Math.round(median(results[which].map((r) => r.rps))),
    cpuUsPerRequest: Math.round(median(results[which].map((r) => r.cpuUsPerRequest))),
    runs: results[which].map((r) => ({ rps: Math.round(r.rps), cpuUs: Math.round(r.cpuUsPerRequest) })),
  });
  const on = row('on');
  const off = row('off');
  // The spread: each pair's ratio (its on run against its off run, taken one after the other).
  const pairRatios = (k: 'rps' | 'cpuUsPerRequest') =>
    results.on.map((r, i) => Number((r[k] / (results.off[i]?.[k] as number)).toFixed(3)));
  process.stdout.write(
    `${JSON.stringify(
      {
        pin: pin.reason,
        loadAverage: { before: load0, after: loadavg()[0] },
        secondsPerRun: SECONDS,
        pairs: PAIRS,
        connections: CONNECTIONS,
        enrichOff: off,
        enrichOn: on,
        rpsRatioOnToOff: Number((on.rps / off.rps).toFixed(3)),
        cpuRatioOnToOff: Number((on.cpuUsPerRequest / off.cpuUsPerRequest).toFixed(3)),
        pairRpsRatios: pairRatios('rps'),
        pairCpuRatios: pairRatios('cpuUsPerRequest'),
        // Where the pairs put the ratio's median (report.ts): a target inside it is not told apart by this run.
        pairRpsMedianInterval: medianInterval(pairRatios('rps'), 0.9),
        memoryMB: { started: rssStarted, afterRuns: rssAfter },
        target: 'rps on/off >= 0.97',
        requestsSent: serial,
        // µs per request by thread (the mean of the runs, warm-up included): where the CPU goes beyond main.
        cpuUsPerRequestByThread: Object.fromEntries(
          (['on', 'off'] as const).map((w) => [
            w,
            Object.fromEntries([...byThread[w]].map(([n, us]) => [n, Math.round(us / (PAIRS + 1))])),
          ]),
        ),
        ...(perf
          ? {
              perfSelfUsPerRequest: [...new Set([...perfSamples.on.keys(), ...perfSamples.off.keys()])]
                .map((k) => {
                  const on = (perfSamples.on.get(k) ?? 0) / (PAIRS + 1);
                  const off = (perfSamples.off.get(k) ?? 0) / (PAIRS + 1);
                  return {
                    k,
                    on: Number(on.toFixed(2)),
                    off: Number(off.toFixed(2)),
                    d: Number((on - off).toFixed(2)),
                  };
                })
                .sort((x, y) => Math.abs(y.d) - Math.abs(x.d))
                .slice(0, 50),
            }
          : {}),
        ...(profiles
          ? {
              profiles: {
                dir: profiles,
                on: `enrich-on-${stamp}.cpuprofile`,
                off: `enrich-off-${stamp}.cpuprofile`,
                answered,
              },
            }
          : {}),
        lookUps: lookUps(),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(dirs.on, { recursive: true, force: true });
  rmSync(dirs.off, { recursive: true, force: true });
}
