// `node --import tsx test/bench/perf-profile.ts [firewall|generic] [seconds] [--dedupe] [--top N] [--pair A,B]`: the whole
// process, not only its main thread, sampled by Linux perf(1) under the benchmark's keep-alive load: threatcol
// (a sensor in Europe/Berlin for firewall records) and the measured bound, one after the other, each
// `perf record -g` for one run, then the frames with the most time in them (inclusive: a frame counts once per
// sample it is on), and self time ranked by what threatcol spends beyond the bound, side by side, in µs per
// request. Unlike `node --cpu-prof` (profile.ts) it sees the
// threadpool's writes and syncs, the GC threads, the kernel and V8's runtime functions (a map transition, a
// dictionary-mode store), which is where the hidden-class cost of the stored records showed (issue 20). perf's
// sampling inflates every figure by 10-25 %: compare the two columns, not against other tools. Raw data stays
// in test/bench/results/profiles/. Needs `perf` (Debian: linux-perf) and permission to use it (root, or
// kernel.perf_event_paranoid <= 1); it says so and exits 0 when it cannot.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue } from './argv.js';
import { LoadWorker, standardWorkload } from './load.js';
import {
  detectPinning,
  ROOT,
  type ServerUnderTest,
  startBound,
  startContractBound,
  startThreatcol,
  zonedSensor,
} from './processes.js';

const kind = process.argv[2] === 'generic' ? 'generic' : 'firewall';
const seconds = Number(process.argv[3] ?? 5);
const top = Number(argValue('--top') ?? 40);
const HZ = 2999;

const probe = spawnSync('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', 'true'], {
  stdio: 'ignore',
});
if (probe.error || probe.status !== 0) {
  process.stdout.write('perf-profile: skipped: `perf record` is not available or not permitted here\n');
  process.exit(0);
}

const pin = detectPinning();
const out = join(ROOT, 'test/bench/results/profiles');
mkdirSync(out, { recursive: true });
const root = mkdtempSync(join(tmpdir(), 'threatcol-perf-'));
// Symbols for JIT code (/tmp/perf-PID.map); V8's own log of them goes to the temporary directory.
// Code must not move once mapped (V8 compacts its code space otherwise, and perf then names a moved function
// after whatever was there first).
const jitArgs = (name: string) => [
  '--perf-basic-prof',
  '--no-compact-code-space',
  `--logfile=${join(root, `${name}-v8.log`)}`,
  '--no-logfile-per-isolate',
];
const worker = new LoadWorker(pin);
const w = standardWorkload(kind, seconds);
const dedupe = process.argv.includes('--dedupe');
const tc = await startThreatcol('threatcol', join(root, 'tc'), pin, {
  nodeArgs: jitArgs('threatcol'),
  ...(dedupe ? { env: { THREATCOL_DEDUPE_WINDOW_SECONDS: '120' } } : {}),
});
const auth = kind === 'firewall' ? await zonedSensor(tc, 'Europe/Berlin') : tc;
// --pair A,B: which two of threatcol, bound and contract (the contract bound) to profile, first against second.
const pair = (argValue('--pair') ?? 'threatcol,bound').split(',');
const servers: Record<string, () => Promise<ServerUnderTest>> = {
  threatcol: async () => tc,
  bound: async () => {
    mkdirSync(join(root, 'bound'));
    return startBound('bound', tc.certPath, tc.keyPath, join(root, 'bound'), pin, jitArgs('bound'));
  },
  contract: async () => {
    mkdirSync(join(root, 'contract'));
    const sensors = [{ sensor: auth.sensor, key: auth.key, timezone: auth === tc ? 'UTC' : 'Europe/Berlin' }];
    return startContractBound(
      'contract bound',
      tc.certPath,
      tc.keyPath,
      join(root, 'contract'),
      sensors,
      pin,
      jitArgs('contract'),
    );
  },
};
const chosen: ServerUnderTest[] = [];
for (const name of pair) {
  const start = servers[name];
  if (!start) throw new Error(`--pair: ${name} is not one of ${Object.keys(servers).join(', ')}`);
  chosen.push(await start());
}
const profiles: Profile[] = [];
try {
  for (const s of chosen) await worker.measure('autocannon', s, auth, { ...w, seconds: 2 });
  for (const s of chosen) {
    const data = join(out, `perf-${kind}-${s.name}-${Date.now()}.data`);
    const perf = spawn(
      'perf',
      ['record', '-e', 'cpu-clock', '-F', String(HZ), '-g', '-p', String(s.pid), '-o', data],
      {
        stdio: 'ignore',
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const m = await worker.measure('autocannon', s, auth, w);
    perf.kill('SIGINT');
    await new Promise((resolve) => perf.once('exit', resolve));
    const script = execFileSync('perf', ['script', '-i', data, '-F', 'comm,tid,ip,sym'], {
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    profiles.push({ name: s.name, requests: m.requests, ...frameCounts(script) });
  }
} finally {
  worker.close();
  for (const s of chosen) if (s !== tc) await s.stop();
  await tc.stop();
  rmSync(root, { recursive: true, force: true });
}

const [a, b] = profiles as [Profile, Profile];
const us = (p: Profile, n: number) => (n * 1e6) / HZ / Math.max(1, p.requests);
process.stdout.write(
  `${kind}${dedupe ? ', dedupe on' : ''}; ${pin.reason}; µs per request, perf-inflated: ${a.name} ${us(a, a.samples).toFixed(1)}, ${b.name} ${us(b, b.samples).toFixed(1)}\n`,
);
table("JS functions, inclusive (threatcol's own code, and node's it calls)", 'inclusive', (f) =>
  f.startsWith('JS:'),
);
table('Self time, ranked by what threatcol spends beyond the bound', 'self', () => true);

function table(title: string, which: 'inclusive' | 'self', keep: (frame: string) => boolean): void {
  const rows = [...new Set([...a[which].keys(), ...b[which].keys()])]
    .filter(keep)
    .map((f) => ({ f, x: us(a, a[which].get(f) ?? 0), y: us(b, b[which].get(f) ?? 0) }))
    .sort((p, q) => (which === 'self' ? q.x - q.y - (p.x - p.y) : q.x - p.x))
    .slice(0, top);
  process.stdout.write(`\n${title}\n| ${a.name} | ${b.name} | frame |\n| --- | --- | --- |\n`);
  for (const r of rows)
    process.stdout.write(`| ${r.x.toFixed(2)} | ${r.y.toFixed(2)} | ${r.f.slice(0, 110)} |\n`);
}

interface Profile {
  name: string;
  requests: number;
  samples: number;
  /** Per frame, the samples it is on (once per sample). */
  inclusive: Map<string, number>;
  /** Per frame, the samples it is the leaf of. */
  self: Map<string, number>;
}

/** Inclusive and self samples per frame name, from `perf script -F comm,tid,ip,sym`. */
function frameCounts(script: string): Omit<Profile, 'name' | 'requests'> {
  const inclusive = new Map<string, number>();
  const self = new Map<string, number>();
  let samples = 0;
  let stack: string[] = [];
  const flush = () => {
    if (stack.length === 0) return;
    samples++;
    self.set(stack[0] as string, (self.get(stack[0] as string) ?? 0) + 1);
    for (const f of new Set(stack)) inclusive.set(f, (inclusive.get(f) ?? 0) + 1);
    stack = [];
  };
  for (const line of script.split('\n')) {
    if (line.trim() === '') flush();
    else if (/^\s/.test(line)) {
      // JIT code: one name whatever its tier (V8 marks them * optimized, ~ interpreted, ^ baseline, + maglev).
      stack.push(
        line
          .trim()
          .replace(/^[0-9a-f]+ /, '')
          .replace(/^JS:[*~^+]/, 'JS:'),
      );
    }
  }
  flush();
  return { inclusive, self, samples };
}
