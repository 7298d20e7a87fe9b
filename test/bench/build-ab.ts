// `node --import tsx test/bench/build-ab.ts --base [LABEL=]BIN... [--batched] [--utc] [--dedupe] [--seconds S]
// [--rotations N] [--each] [--dedupe-too] [--together] [--outsider]`: the keep-alive (a sensor in Europe/Berlin; --utc: a UTC
// one) or batched load against the reference, the measured bound (bound-server.mjs), the contract bound
// (contract-bound-server.mjs), other builds (`--base`, repeatable: another checkout's bin/threatcol) and this
// one, rotated in one run, so a hot-path change is measured before/after on the same box in the same minutes.
// Files backend, rate limit and dedupe off, as figures 2 and 4 (--dedupe: on, as shipped). Run it under
// `flock /tmp/threatcol-bench.lock` so two benchmarks do not share the cores. --outsider: figure 10's setting
// (nothing pinned, 8 s runs, dedupe on, `--log-level warn`) for its before/after.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue, baseBuilds } from './argv.js';
import { cpuMicrosPerRequest, LoadWorker, type Measured, standardWorkload } from './load.js';
import {
  detectPinning,
  type ServerUnderTest,
  startBound,
  startContractBound,
  startReference,
  startThreatcol,
  type ThreatcolServer,
  zonedSensor,
} from './processes.js';
import { fmt, median } from './report.js';

const batched = process.argv.includes('--batched');
const utc = process.argv.includes('--utc');
// --dedupe: retry dedupe on, as shipped (figure 10), instead of off as figures 2 and 4.
const outsider = process.argv.includes('--outsider');
const dedupe = outsider || process.argv.includes('--dedupe');
const seconds = Number(argValue('--seconds') ?? (outsider ? 8 : 4));
const rotations = Number(argValue('--rotations') ?? 3);
const pin = outsider ? { pinned: false, serverCpu: '', loadCpu: '', reason: 'not pinned' } : detectPinning();
const worker = new LoadWorker(pin);
const w = standardWorkload(batched ? 'generic' : 'firewall', seconds);
const root = mkdtempSync(join(tmpdir(), 'threatcol-build-ab-'));
const servers: { label: string; server: ServerUnderTest; auth: ThreatcolServer | null }[] = [];
const sideWorkers: LoadWorker[] = [];
try {
  const builds: { label: string; bin?: string; dedupe?: boolean }[] = [
    ...baseBuilds(),
    { label: 'this build' },
  ];
  // --dedupe-too: this build once more with dedupe on, beside the rows with it off (what dedupe costs).
  if (process.argv.includes('--dedupe-too')) builds.push({ label: 'this build, dedupe on', dedupe: true });
  let first: ThreatcolServer | null = null;
  for (const b of builds) {
    const s = await startThreatcol(b.label, join(root, `tc-${servers.length}`), pin, {
      ...(b.bin ? { bin: b.bin } : {}),
      ...(dedupe || b.dedupe ? { env: { THREATCOL_DEDUPE_WINDOW_SECONDS: '120' } } : {}),
      ...(outsider ? { args: ['--log-level', 'warn'], quiet: true } : {}),
    });
    const auth = batched || utc ? s : await zonedSensor(s, 'Europe/Berlin');
    first ??= s;
    servers.push({ label: b.label, server: s, auth });
  }
  const tc = first as ThreatcolServer;
  mkdirSync(join(root, 'bound'));
  mkdirSync(join(root, 'contract'));
  const sender = servers.at(-1)?.auth as ThreatcolServer;
  const zone = batched || utc ? 'UTC' : 'Europe/Berlin';
  servers.unshift(
    {
      label: 'reference',
      server: await startReference('reference', tc.certPath, tc.keyPath, pin),
      auth: null,
    },
    {
      label: 'bound',
      server: await startBound('bound', tc.certPath, tc.keyPath, join(root, 'bound'), pin),
      auth: null,
    },
    {
      label: 'contract bound',
      server: await startContractBound(
        'contract bound',
        tc.certPath,
        tc.keyPath,
        join(root, 'contract'),
        [{ sensor: sender.sensor, key: sender.key, timezone: zone }],
        pin,
      ),
      auth: null,
    },
  );
  const authOf = (s: (typeof servers)[number]) => s.auth ?? (servers.at(-1)?.auth as ThreatcolServer);
  for (const s of servers) await worker.measure('autocannon', s.server, authOf(s), { ...w, seconds: 1 });
  const runs = new Map<string, Measured[]>(servers.map((s) => [s.label, []]));
  // --together: the builds and the contract bound are loaded at the same time (each by a generator of its own,
  // all on the load core, all servers on the server core), so a change in the host hits them alike: their CPU
  // per request compare within one window. Their records/s then share one core and do not compare with the
  // reference's or the bound's, which still run alone.
  const together = process.argv.includes('--together');
  const loadedAlone = (s: (typeof servers)[number]) => s.label === 'reference' || s.label === 'bound';
  const alone = together ? servers.filter(loadedAlone) : servers;
  const side = together ? servers.filter((s) => !loadedAlone(s)) : [];
  for (let i = 0; i < side.length; i++) sideWorkers.push(new LoadWorker(pin));
  for (let r = 0; r < rotations; r++) {
    for (const s of alone)
      runs.get(s.label)?.push(await worker.measure('autocannon', s.server, authOf(s), w));
    const measured = await Promise.all(
      side.map((s, i) => (sideWorkers[i] as LoadWorker).measure('autocannon', s.server, authOf(s), w)),
    );
    for (const [i, s] of side.entries()) runs.get(s.label)?.push(measured[i] as Measured);
    // --each: every rotation's figures as it ends, to see the spread behind the medians.
    if (process.argv.includes('--each')) {
      const each = servers.map((s) => {
        const m = runs.get(s.label)?.at(-1) as Measured;
        return `${s.label} ${fmt.n(m.recordsPerSecond)}/s ${fmt.n(cpuMicrosPerRequest(m))} us`;
      });
      process.stdout.write(`rotation ${r + 1}: ${each.join('; ')}\n`);
    }
  }
  const at = (label: string, r: number) => (runs.get(label) as Measured[])[r] as Measured;
  const cpuUs = cpuMicrosPerRequest;
  const perCpu = (m: Measured) => m.records / Math.max(1e-9, m.serverCpuSeconds);
  const perRotation = (f: (r: number) => number) => median(Array.from({ length: rotations }, (_, r) => f(r)));
  const before = builds.length > 1 ? (builds[0] as { label: string }).label : null;
  const rows = servers.map((s) => {
    const ms = runs.get(s.label) as Measured[];
    const vs = (other: string) =>
      fmt.x(perRotation((r) => at(s.label, r).recordsPerSecond / at(other, r).recordsPerSecond));
    const cpuVs = (other: string) => fmt.x(perRotation((r) => cpuUs(at(s.label, r)) / cpuUs(at(other, r))));
    return {
      server: s.label,
      'records/s': fmt.n(median(ms.map((m) => m.recordsPerSecond))),
      'CPU us/request': fmt.n(median(ms.map(cpuUs))),
      'records/CPU-s': fmt.n(median(ms.map(perCpu))),
      p99: fmt.ms(median(ms.map((m) => m.latencyMs.p99))),
      'x ref rate; CPU': `${vs('reference')}; ${cpuVs('reference')}`,
      'x bound rate; CPU': `${vs('bound')}; ${cpuVs('bound')}`,
      'x contract bound rate; CPU': `${vs('contract bound')}; ${cpuVs('contract bound')}`,
      'x before rate; CPU': before && s.label !== before ? `${vs(before)}; ${cpuVs(before)}` : '',
      'non-2xx': String(ms.reduce((n, m) => n + m.non2xx + m.errors, 0)),
    };
  });
  const what = batched
    ? 'batched /generic x100'
    : `keep-alive /firewall, ${utc ? 'UTC sensor' : 'sensor in Europe/Berlin'}`;
  process.stdout.write(
    `${what}${dedupe ? ', dedupe on' : ''}; ${rotations} rotations of ${seconds} s; ${pin.reason}; medians (ratios: per rotation)${together ? '; the builds loaded together, sharing the cores' : ''}\n`,
  );
  const cols = Object.keys(rows[0] ?? {});
  process.stdout.write(`| ${cols.join(' | ')} |\n|${cols.map(() => ' --- |').join('')}\n`);
  for (const r of rows) process.stdout.write(`| ${Object.values(r).join(' | ')} |\n`);
} finally {
  worker.close();
  for (const wk of sideWorkers) wk.close();
  for (const s of servers) await s.server.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
}
