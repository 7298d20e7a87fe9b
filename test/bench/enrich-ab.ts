// What the country and AS enrichment costs on the hot path: threatcol with enrich on (the default) against
// enrich off, same binary, alternated A B A B, keep-alive /firewall, one distinct record per request whose
// source is a distinct public address (no look-up is answered from the cache of recent addresses: its full
// cost), plus the look-ups per second of the shipped databases in one process and the memory they take.
// Run: npm run build && flock /tmp/threatcol-bench.lock node --expose-gc --import tsx test/bench/enrich-ab.ts
// (--quick: 2 s runs, 2 pairs). Target: on/off requests per second >= 0.97.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startEnricher } from '../../src/enrich/enricher.js';
import { firewallRecord } from './payloads.js';
import {
  detectPinning,
  keepAliveFirewallLoad,
  memory,
  startThreatcol,
  type ThreatcolServer,
} from './processes.js';
import { median } from './report.js';

const quick = process.argv.includes('--quick');
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

async function load(server: ThreatcolServer): Promise<{ rps: number; cpuUsPerRequest: number }> {
  const r = await keepAliveFirewallLoad(server, { connections: CONNECTIONS, seconds: SECONDS, nextBody });
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
const start = (which: 'on' | 'off') =>
  startThreatcol(`enrich-${which}`, dirs[which], pin, {
    env: { THREATCOL_ENRICH_ENABLED: which === 'on' ? 'true' : 'false' },
  });
const results: Record<'on' | 'off', { rps: number; cpuUsPerRequest: number }[]> = { on: [], off: [] };
try {
  const load0 = loadavg()[0] as number;
  const servers = { on: await start('on'), off: await start('off') };
  // Resident memory (MB) once started, and after the runs: what the loaded tables add to a serving process.
  const mb = (which: 'on' | 'off') => {
    const m = memory(servers[which].pid);
    return { rss: Math.round(m.rss / 2 ** 20), peak: Math.round(m.peak / 2 ** 20) };
  };
  const rssStarted = { on: mb('on'), off: mb('off') };
  await load(servers.on); // warm-up, both
  await load(servers.off);
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
    for (const which of order) results[which].push(await load(servers[which]));
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
        memoryMB: { started: rssStarted, afterRuns: rssAfter },
        target: 'rps on/off >= 0.97',
        requestsSent: serial,
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
