// Figure 17, blocklists: the decisions engine's throughput on distinct records (decisions-engine.ts), keep-alive
// ingest with the engine on against off, rendering a 100,000-entry feed in each format (decisions-figures.ts),
// and ingest while firewalls poll a 50,000-entry feed 200 times a second with If-None-Match, against without.
// Every ratio is against a reference from the same run, alternated A B A B.
// By hand, the engine before/after: `node --import tsx test/bench/figures-decisions.ts --base ROOT [--records N]
// [--rounds N]` (ROOT: another checkout with its node_modules), alternated, one process per measure.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { hashKey } from '../../src/keys.js';
import type { Block, DecisionChange } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { argValue } from './argv.js';
import { feedLatency } from './feed-latency.js';
import { type BenchContext, warmUp } from './figures-load.js';
import { type Measured, standardWorkload } from './load.js';
import { payloadBodies } from './payloads.js';
import { mainThreadSeconds, pinned, ROOT, startThreatcol, type ThreatcolServer } from './processes.js';
import { fmt, median, type Row } from './report.js';

const ENGINE_TARGET = 100_000;
const INGEST_TARGET = 0.95;
const POLLS_PER_SECOND = 200;
/** Pairs of runs for the two ingest ratios outside --quick (pairs()). */
const RATIO_PAIRS = 10;
const POLLED_ENTRIES = 50_000;
/** The guarantee: a block is in every feed within 1 s of its record's 200 (docs/blocklists.md). */
const BLOCK_IN_FEED_MS = 1000;
const LATENCY_CONNECTIONS = 16;
/** Distinct firewall bodies, as text (feed-latency.ts's load). */
const firewallBodies = () => {
  const body = payloadBodies({ kind: 'firewall' });
  return () => body().toString();
};

interface EngineRun {
  path: string;
  records: number;
  cpuSeconds: number;
  /** Of cpuSeconds, the engine's start: the decisions read, the rules' window scanned again. */
  startCpuSeconds: number;
  wallMs: number;
  tracked: number;
  heapMiB: number;
}

/** One engine measure in a process of its own (`src`: a checkout's root; default this one). */
export function engineRun(records: number, src = ROOT, path: 'feed' | 'scan' = 'feed'): EngineRun {
  const out = execFileSync(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      join(ROOT, 'test/bench/decisions-engine.ts'),
      '--src',
      src,
      '--path',
      path,
      '--records',
      String(records),
    ],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  const run = JSON.parse(out.trim().split('\n').at(-1) as string) as EngineRun;
  if (run.tracked < records) throw new Error(`the engine counted ${run.tracked} of ${records} records`);
  return run;
}

/**
 * Records per engine CPU-second. Reading its feed: from the end of its start (the scan of the day's log at start
 * costs per record on disk, not per record read: its own row). The scan: the whole run.
 */
const perCpuSecond = (r: EngineRun) =>
  r.records / (r.path === 'feed' ? r.cpuSeconds - r.startCpuSeconds : r.cpuSeconds);

function engineRows(ctx: BenchContext): Row[] {
  const records = ctx.quick ? 20_000 : 200_000;
  const rounds = ctx.quick ? 1 : 3;
  const feed: EngineRun[] = [];
  const scan: EngineRun[] = [];
  for (let i = 0; i < rounds; i++) {
    feed.push(engineRun(records));
    scan.push(engineRun(records, ROOT, 'scan'));
  }
  const show = (runs: EngineRun[]) => runs.map((r) => fmt.n(perCpuSecond(r))).join(' ');
  ctx.log(
    `  engine, records per CPU-second: reading its feed ${show(feed)}; the scan at start ${show(scan)}; its start beside ${fmt.n(records)} records out of its window ${feed.map((r) => fmt.ms(r.startCpuSeconds * 1000)).join(' ')} CPU`,
  );
  const f = median(feed.map(perCpuSecond));
  return [
    {
      figure: `17 decisions engine, ${fmt.n(records)} distinct records from its feed, records per engine CPU-second (after its start)`,
      generator: 'in process',
      threatcol: fmt.n(f),
      reference: `heap ${median(feed.map((r) => r.heapMiB)).toFixed(0)} MiB`,
      ratio: '',
      target: `>= ${fmt.n(ENGINE_TARGET)}`,
      pass: f >= ENGINE_TARGET,
    },
    {
      figure: `17 the same, its start (decisions read, today's ${fmt.n(records)} records scanned for its window), engine CPU`,
      generator: 'in process',
      threatcol: fmt.ms(median(feed.map((r) => r.startCpuSeconds * 1000))),
      reference: `whole run ${fmt.n(median(feed.map((r) => r.records / r.cpuSeconds)))} rec/CPU-s`,
      ratio: '',
      target: '',
      pass: null,
    },
    {
      figure: `17 the same, the window read again at start (store scan), records per engine CPU-second`,
      generator: 'in process',
      threatcol: fmt.n(median(scan.map(perCpuSecond))),
      reference: '',
      ratio: '',
      target: '',
      pass: null,
    },
  ];
}

function renderRows(ctx: BenchContext): Row[] {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', join(ROOT, 'test/bench/decisions-figures.ts')],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const runs = out
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          format: string;
          entries: number;
          bytes: number;
          ms: number;
          againMs: number;
          heapMiB: number;
        },
    );
  ctx.log(
    `  render 100,000 entries: ${runs.map((r) => `${r.format} ${fmt.ms(r.ms)} (again ${fmt.ms(r.againMs)}) +${r.heapMiB.toFixed(0)} MiB`).join(', ')}`,
  );
  return runs.map((r) => ({
    figure: `17 render a ${fmt.n(r.entries)}-entry feed, ${r.format} (${fmt.mb(r.bytes)}), time (its blocks' first render, then again) and heap`,
    generator: 'in process',
    threatcol: `${fmt.ms(r.ms)}, again ${fmt.ms(r.againMs)}`,
    reference: `heap +${r.heapMiB.toFixed(0)} MiB`,
    ratio: '',
    target: '',
    pass: null,
  }));
}

/** The rules of the engine-on collector; blockPrivate: the load's sources are in 10/8 (payloads.ts). */
export function engineConfig(path: string): string {
  writeFileSync(
    path,
    JSON.stringify({
      blocklist: {
        blockPrivate: true,
        rules: {
          critical: { minCriticality: 4, duration: '24h' },
          spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
        },
      },
    }),
  );
  return path;
}

/**
 * Runs of `a` and `b` in pairs, the order turned each pair (A B, B A, ...: what one run leaves, a collector's
 * engine still reading its backlog or a warmer cache, falls on both sides alike), and the median of the pairs'
 * ratios b/a. Ten pairs at least outside --quick: these rows' targets are a few per cent, and five pairs of this
 * box's runs spread wider than that.
 */
async function pairs(
  ctx: BenchContext,
  a: () => Promise<Measured>,
  b: () => Promise<Measured>,
): Promise<{ a: Measured[]; b: Measured[]; ratio: number }> {
  const as: Measured[] = [];
  const bs: Measured[] = [];
  const count = ctx.quick ? ctx.pairs : Math.max(RATIO_PAIRS, ctx.pairs);
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      as.push(await a());
      bs.push(await b());
    } else {
      bs.push(await b());
      as.push(await a());
    }
  }
  // A run that stored nothing (a starved box: the generator got no answer in time) makes no ratio.
  const ratios = bs.flatMap((m, i) => {
    const ref = (as[i] as Measured).recordsPerSecond;
    return ref > 0 && m.recordsPerSecond > 0 ? [m.recordsPerSecond / ref] : [];
  });
  return { a: as, b: bs, ratio: median(ratios) };
}

async function ingestRows(ctx: BenchContext, root: string): Promise<Row[]> {
  const dir = join(root, 'decisions-ingest');
  mkdirSync(dir, { recursive: true });
  const off = await startThreatcol('engine off', join(dir, 'off'), ctx.pin);
  let on: ThreatcolServer | null = null;
  try {
    on = await startThreatcol('engine on', join(dir, 'on'), ctx.pin, {
      args: ['--config', engineConfig(join(dir, 'config.json'))],
    });
    const engine = on;
    const w = standardWorkload('firewall', Math.max(2, ctx.seconds));
    await warmUp(ctx, [off, engine], off, w);
    // The CPU per request of serve's main thread (the engine runs in a thread of its own): steady whatever
    // the box's load, where the rates swing with it.
    const mainUs: Record<'off' | 'on', number[]> = { off: [], on: [] };
    const measure = async (which: 'off' | 'on', server: ThreatcolServer) => {
      const before = mainThreadSeconds(server.pid);
      const m = await ctx.worker.measure('autocannon', server, server, w);
      if (m.requests > 0) mainUs[which].push(((mainThreadSeconds(server.pid) - before) / m.requests) * 1e6);
      return m;
    };
    const p = await pairs(
      ctx,
      () => measure('off', off),
      () => measure('on', engine),
    );
    const show = (ms: Measured[]) => ms.map((m) => fmt.n(m.recordsPerSecond)).join(' ');
    const mainRatio = median(mainUs.on) / median(mainUs.off);
    ctx.log(
      `  engine off ${show(p.a)} | on ${show(p.b)} rec/s; main thread ${fmt.n(median(mainUs.off))} | ${fmt.n(median(mainUs.on))} µs a request`,
    );
    ctx.runs['17 engine on/off [autocannon]'] = { reference: p.a, threatcol: p.b, ratios: [p.ratio] };
    // The guarantee under the same load: a critical record's block in a polled feed within 1 s of its 200.
    const latencies = await feedLatency(engine, Math.max(2, ctx.seconds), {
      connections: LATENCY_CONNECTIONS,
      nextBody: firewallBodies(),
    });
    const slowest = Math.max(...latencies);
    ctx.log(`  a block in the feed after its record's 200: ${latencies.map((ms) => fmt.n(ms)).join(' ')} ms`);
    return [
      {
        figure: '17 keep-alive /firewall with the decisions engine on (two rules), against off, rec/s',
        generator: 'autocannon',
        threatcol: fmt.n(median(p.b.map((m) => m.recordsPerSecond))),
        reference: `${fmt.n(median(p.a.map((m) => m.recordsPerSecond)))} (off)`,
        ratio: fmt.x(p.ratio),
        target: `>= ${INGEST_TARGET}x`,
        pass: Number.isFinite(p.ratio) ? p.ratio >= INGEST_TARGET : null,
      },
      {
        figure:
          "17 the same, CPU of serve's main thread (the one that takes records) per request, on against off",
        generator: 'autocannon',
        threatcol: `${fmt.n(median(mainUs.on))} µs`,
        reference: `${fmt.n(median(mainUs.off))} µs (off)`,
        ratio: fmt.x(mainRatio),
        target: '',
        pass: null,
      },
      {
        figure: `17 a block in a feed polled every 20 ms after its record's 200, under keep-alive load (ms, median and slowest of ${latencies.length})`,
        generator: 'keep-alive',
        threatcol: `${fmt.n(median(latencies))}; ${fmt.n(slowest)}`,
        reference: '',
        ratio: '',
        target: `<= ${BLOCK_IN_FEED_MS} ms`,
        pass: latencies.length > 0 ? slowest <= BLOCK_IN_FEED_MS : null,
      },
    ];
  } finally {
    await off.stop();
    await on?.stop();
  }
}

/** 50,000 blocks and a feed `edge` written to the collector's store before it starts. */
async function seedFeed(dataDir: string, password: string): Promise<void> {
  const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir } });
  const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
  try {
    const now = Date.now();
    const changes: DecisionChange[] = [];
    for (let i = 0; i < POLLED_ENTRIES; i++) {
      const address = `198.18.${(i >> 8) & 0xff}.${i & 0xff}`;
      const block: Block = {
        address,
        rule: 'critical',
        reason: 'rule critical: criticality >= 4',
        since: new Date(now).toISOString(),
        until: new Date(now + 7 * 86_400_000).toISOString(),
        criticality: 4,
        records: 1,
        sensors: ['fw1'],
        who: null,
      };
      changes.push({ kind: 'block', key: address, value: block });
    }
    changes.push({
      kind: 'feed',
      key: 'edge',
      value: {
        name: 'edge',
        format: 'paloalto',
        passwordHash: hashKey(password),
        maxEntries: null,
        family: 'any',
        createdAt: new Date(now).toISOString(),
        rotatedAt: null,
      },
    });
    await store.decisions.apply(changes);
  } finally {
    await store.close();
  }
}

/** The poller (feed-poller.mjs) on the load generators' core; `ask` sends a message and waits for the counts. */
function poller(ctx: BenchContext, server: ThreatcolServer, password: string) {
  const run = pinned(ctx.pin.loadCpu, [
    join(ROOT, 'test/bench/feed-poller.mjs'),
    `${server.url}/feeds/edge`,
    server.certPath,
    `edge:${password}`,
    String(POLLS_PER_SECOND),
  ]);
  const child = spawn(run.cmd, run.args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let counts = { statuses: {} as Record<number, number>, error: '' };
  const ask = (m: 'first' | 'go' | 'halt') =>
    new Promise<void>((resolve) =>
      child
        .once('message', (answer) => {
          counts = answer as typeof counts;
          resolve();
        })
        .send(m),
    );
  return {
    counts: () => counts,
    ask,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send('close');
      }),
  };
}

async function pollRows(ctx: BenchContext, root: string): Promise<Row[]> {
  const dataDir = join(root, 'decisions-poll');
  mkdirSync(dataDir, { recursive: true });
  const password = 'bench-feed-password-0123456789';
  await seedFeed(dataDir, password);
  const server = await startThreatcol('feed polled', dataDir, ctx.pin);
  const polls = poller(ctx, server, password);
  try {
    await polls.ask('first');
    if (polls.counts().statuses[200] !== 1)
      throw new Error(`figure 17: the feed answered ${JSON.stringify(polls.counts())}`);
    const w = standardWorkload('firewall', Math.max(2, ctx.seconds));
    await warmUp(ctx, [server], server, w);
    const p = await pairs(
      ctx,
      () => ctx.worker.measure('autocannon', server, server, w),
      async () => {
        await polls.ask('go');
        try {
          return await ctx.worker.measure('autocannon', server, server, w);
        } finally {
          await polls.ask('halt');
        }
      },
    );
    const show = (ms: Measured[]) => ms.map((m) => fmt.n(m.recordsPerSecond)).join(' ');
    const { statuses, error } = polls.counts();
    ctx.log(`  without polls ${show(p.a)} | with ${show(p.b)} rec/s; answers ${JSON.stringify(statuses)}`);
    if (statuses[0]) ctx.log(`  ${fmt.n(statuses[0])} polls failed: ${error}`);
    const failed = [...p.a, ...p.b].reduce((n, m) => n + m.non2xx + m.errors, 0);
    if (failed > 0) ctx.log(`  ${fmt.n(failed)} requests failed (non-2xx or errors)`);
    ctx.runs['17 feed polled [autocannon]'] = { reference: p.a, threatcol: p.b, ratios: [p.ratio] };
    const answered = (statuses[304] ?? 0) + (statuses[200] ?? 0);
    return [
      {
        figure: `17 keep-alive /firewall while a ${fmt.n(POLLED_ENTRIES)}-entry feed is polled ${POLLS_PER_SECOND}/s with If-None-Match (${fmt.n(answered)} answered, ${fmt.n(statuses[304] ?? 0)} 304, poller on the load core), against no polls, rec/s`,
        generator: 'autocannon',
        threatcol: fmt.n(median(p.b.map((m) => m.recordsPerSecond))),
        reference: `${fmt.n(median(p.a.map((m) => m.recordsPerSecond)))} (no polls)`,
        ratio: fmt.x(p.ratio),
        target: `>= ${INGEST_TARGET}x`,
        pass: Number.isFinite(p.ratio) ? p.ratio >= INGEST_TARGET : null,
      },
    ];
  } finally {
    await polls.close();
    await server.stop();
  }
}

/** Figure 17 for `npm run bench`. */
export async function decisionsRows(ctx: BenchContext, root: string): Promise<Row[]> {
  return [
    ...engineRows(ctx),
    ...renderRows(ctx),
    ...(await ingestRows(ctx, root)),
    ...(await pollRows(ctx, root)),
  ];
}

// By hand: this build's engine against another checkout's, alternated, one process per measure.
const base = import.meta.url === `file://${process.argv[1]}` ? argValue('--base') : undefined;
if (base !== undefined) {
  const records = Number(argValue('--records') ?? 100_000);
  const rounds = Number(argValue('--rounds') ?? 3);
  const load = () => spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim();
  const before: number[] = [];
  const after: number[] = [];
  for (let i = 0; i < rounds; i++) {
    before.push(perCpuSecond(engineRun(records, base)));
    after.push(perCpuSecond(engineRun(records)));
    process.stdout.write(
      `round ${i + 1}: before ${fmt.n(before.at(-1) as number)}, after ${fmt.n(after.at(-1) as number)} records per CPU-second (load ${load()})\n`,
    );
  }
  const ratios = after.map((a, i) => a / (before[i] as number));
  process.stdout.write(
    `engine, ${fmt.n(records)} distinct records from its feed: before ${fmt.n(median(before))}, after ${fmt.n(median(after))} records per CPU-second, after/before ${fmt.x(median(ratios))} (median of ${rounds} alternated rounds)\n`,
  );
}
