// What the decisions engine costs ingest: threatcol with two blocklist rules (figure 17's) against none, same
// binary, alternated A B B A, keep-alive /firewall, the standard firewall bodies (distinct records, sources in
// 10/8, blockPrivate on so the rules count them). Per run: requests per second, the server's CPU per request
// (every thread) and its main thread's (the one that takes records; the engine runs in a thread of its own).
// Run: npm run build && flock /tmp/threatcol-bench.lock taskset -c 0 node --import tsx test/bench/decisions-ab.ts
// (AB_SECONDS, AB_PAIRS; AB_BASE=OTHER-CHECKOUT/bin/threatcol: a third collector, engine on, of another build,
// in the same rotation: before and after a change in one run).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineConfig } from './figures-decisions.js';
import { payloadBodies } from './payloads.js';
import {
  detectPinning,
  keepAliveFirewallLoad,
  mainThreadSeconds,
  startThreatcol,
  type ThreatcolServer,
} from './processes.js';
import { median } from './report.js';

const SECONDS = Number(process.env.AB_SECONDS ?? 5);
const PAIRS = Number(process.env.AB_PAIRS ?? 3);
const CONNECTIONS = 16;
const pin = detectPinning();
const body = payloadBodies({ kind: 'firewall' });
const nextBody = () => body().toString();

type Run = { rps: number; cpuUsPerRequest: number; mainUsPerRequest: number; engineUsPerRequest: number };

/** CPU seconds of `pid`'s engine thread (named "threatcol decisions", cut to 15 characters), 0 when it has none. */
function engineThreadSeconds(pid: number): number {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (!readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith('threatcol decis')) continue;
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // ended meanwhile
    }
  }
  return 0;
}

async function load(server: ThreatcolServer): Promise<Run> {
  const main0 = mainThreadSeconds(server.pid);
  const engine0 = engineThreadSeconds(server.pid);
  const r = await keepAliveFirewallLoad(server, { connections: CONNECTIONS, seconds: SECONDS, nextBody });
  const requests = r.rps * SECONDS;
  return {
    rps: r.rps,
    cpuUsPerRequest: r.cpuSecondsPerRequest * 1e6,
    mainUsPerRequest: ((mainThreadSeconds(server.pid) - main0) / requests) * 1e6,
    // One record a request: the engine thread's CPU per record it read beside this ingest.
    engineUsPerRequest: ((engineThreadSeconds(server.pid) - engine0) / requests) * 1e6,
  };
}

const dirs = {
  on: mkdtempSync(join(tmpdir(), 'threatcol-decisions-on-')),
  off: mkdtempSync(join(tmpdir(), 'threatcol-decisions-off-')),
  base: mkdtempSync(join(tmpdir(), 'threatcol-decisions-base-')),
};
const configPath = engineConfig(join(dirs.on, 'config.json'));
const BASE = process.env.AB_BASE;
type Which = 'on' | 'off' | 'base';
const results: Record<Which, Run[]> = { on: [], off: [], base: [] };
try {
  const load0 = loadavg()[0] as number;
  const servers: Partial<Record<Which, ThreatcolServer>> = {
    on: await startThreatcol('decisions-on', dirs.on, pin, { args: ['--config', configPath] }),
    off: await startThreatcol('decisions-off', dirs.off, pin),
    ...(BASE
      ? {
          base: await startThreatcol('decisions-base', dirs.base, pin, {
            bin: BASE,
            args: ['--config', configPath],
          }),
        }
      : {}),
  };
  const running = Object.entries(servers) as [Which, ThreatcolServer][];
  for (const [, server] of running) await load(server); // warm-up, each
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? running : [...running].reverse();
    for (const [which, server] of order) {
      const r = await load(server);
      results[which].push(r);
      process.stderr.write(
        `${which} ${Math.round(r.rps)} rps, ${Math.round(r.cpuUsPerRequest)} us/req, main thread ${Math.round(r.mainUsPerRequest)}, engine thread ${r.engineUsPerRequest.toFixed(1)} (load ${loadavg()[0]})\n`,
      );
    }
  }
  for (const [, server] of running) await server.stop();
  const row = (which: Which) => ({
    rps: Math.round(median(results[which].map((r) => r.rps))),
    cpuUsPerRequest: Math.round(median(results[which].map((r) => r.cpuUsPerRequest))),
    mainUsPerRequest: Math.round(median(results[which].map((r) => r.mainUsPerRequest))),
    engineUsPerRequest: Number(median(results[which].map((r) => r.engineUsPerRequest)).toFixed(1)),
  });
  const on = row('on');
  const off = row('off');
  const ratios = results.on.map((r, i) => r.rps / (results.off[i] as Run).rps);
  const base = BASE ? row('base') : null;
  const baseRatios = results.base.map((r, i) => r.rps / (results.off[i] as Run).rps);
  process.stdout.write(
    `${JSON.stringify({
      pin: pin.reason,
      loadAverage: { before: load0, after: loadavg()[0] },
      secondsPerRun: SECONDS,
      pairs: PAIRS,
      engineOff: off,
      engineOn: on,
      rpsRatioOnToOff: Number(median(ratios).toFixed(3)),
      pairRatios: ratios.map((r) => Number(r.toFixed(3))),
      cpuRatioOnToOff: Number((on.cpuUsPerRequest / off.cpuUsPerRequest).toFixed(3)),
      mainThreadCpuRatioOnToOff: Number((on.mainUsPerRequest / off.mainUsPerRequest).toFixed(3)),
      ...(base
        ? {
            engineOnBase: base,
            baseRpsRatioOnToOff: Number(median(baseRatios).toFixed(3)),
            basePairRatios: baseRatios.map((r) => Number(r.toFixed(3))),
            baseCpuRatioOnToOff: Number((base.cpuUsPerRequest / off.cpuUsPerRequest).toFixed(3)),
            baseMainThreadCpuRatioOnToOff: Number((base.mainUsPerRequest / off.mainUsPerRequest).toFixed(3)),
          }
        : {}),
      target: 'rps on/off >= 0.95',
    })}\n`,
  );
} finally {
  rmSync(dirs.on, { recursive: true, force: true });
  rmSync(dirs.off, { recursive: true, force: true });
  rmSync(dirs.base, { recursive: true, force: true });
}
