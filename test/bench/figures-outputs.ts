// Figures 12 and 13 (issue 28): an output's forwarding throughput per second of forwarder CPU (webhook sink,
// rsyslogd over TLS), and keep-alive ingest with one webhook output attached against none, paired A B A B.
import { type ChildProcess, execFile, fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type BenchContext, warmUp } from './figures-load.js';
import { cpuMicrosPerRequest, type Measured, standardWorkload } from './load.js';
import { cpuSeconds, pinned, ROOT, startThreatcol } from './processes.js';
import { fmt, median, type Pairs, pairRatios, type Row } from './report.js';

const run = promisify(execFile);
const FORWARDING_TARGET = 50_000;
const INGEST_TARGET = 0.9;
/** The shipped default `batch.maxRecords`: the figure measures what an operator gets without tuning. */
const BATCH = 500;

interface Forwarded {
  records: number;
  received: number | null;
  seconds: number;
  recordsPerSecond: number;
  recordsPerCpuSecond: number;
}

/** Figure 12: each receiver in turn, the forwarder in a child process pinned like a server (its CPU alone). */
export async function forwardingRows(ctx: BenchContext): Promise<Row[]> {
  // --quick keeps enough records that the JIT's warm-up does not make the figure (8 MiB: 40,000 per CPU second).
  const mib = ctx.quick ? 32 : 64;
  const rows: Row[] = [];
  const receivers = [
    { type: 'webhook', what: 'webhook (JSON over HTTP, loopback sink)' },
    { type: 'syslog', what: 'syslog (RFC 5425 over TLS, rsyslogd)' },
  ];
  for (const { type, what } of receivers) {
    const script = join(ROOT, 'test/bench/outputs-forwarding.ts');
    const { cmd, args } = pinned(ctx.pin.pinned ? ctx.pin.serverCpu : '', [
      '--import',
      'tsx',
      script,
      type,
      String(mib),
      String(BATCH),
    ]);
    let result: Forwarded;
    try {
      const { stdout } = await run(cmd, args, { cwd: ROOT, timeout: 300_000 });
      result = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Forwarded;
    } catch (error) {
      ctx.log(`figure 12: ${type} skipped: ${(error as Error).message.split('\n')[0]}`);
      continue;
    }
    ctx.log(
      `  ${type}: ${fmt.n(result.records)} records in ${result.seconds} s, ` +
        `${fmt.n(result.recordsPerSecond)} rec/s wall, ${fmt.n(result.recordsPerCpuSecond)} per CPU second` +
        (result.received === null ? '' : `, ${fmt.n(result.received)} written by rsyslogd`),
    );
    rows.push({
      figure: `12 forwarding to ${what}, batches of ${BATCH}, records per forwarder CPU second`,
      generator: 'forwarder',
      threatcol: fmt.n(result.recordsPerCpuSecond),
      reference: `${fmt.n(result.recordsPerSecond)} rec/s wall`,
      ratio: 'n/a',
      target: `>= ${fmt.n(FORWARDING_TARGET)}`,
      pass: result.recordsPerCpuSecond >= FORWARDING_TARGET,
    });
  }
  return rows;
}

/** Server CPU time per answered request, in microseconds (as figure 2's CPU rows). */
const cpuPerRequest = (ms: Measured[]) => median(ms.map(cpuMicrosPerRequest));

function postsOf(sink: ChildProcess): Promise<number> {
  const answer = new Promise<number>((resolve) =>
    sink.once('message', (m) => resolve((m as { posts: number }).posts)),
  );
  sink.send('posts');
  return answer;
}

/**
 * Waits out a collector's backlog (drained); its CPU meanwhile is added to the run's, so that the CPU per
 * request counts forwarding every record the run stored, not only what was forwarded while the load ran.
 */
async function withBacklog(sink: ChildProcess, pid: number, run: Measured): Promise<Measured> {
  const before = cpuSeconds(pid);
  await drained(sink);
  return { ...run, serverCpuSeconds: run.serverCpuSeconds + cpuSeconds(pid) - before };
}

/** Until the sink took no batch for 1.5 s (longer than the output's default maxWaitMs), at most a minute. */
async function drained(sink: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = -1;
  let quiet = 0;
  while (quiet < 3 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const posts = await postsOf(sink);
    quiet = posts === last ? quiet + 1 : 0;
    last = posts;
  }
}

/**
 * Figure 13: two collectors running side by side, one with a webhook output forwarding every record to a
 * loopback sink in another process, the other with none; the same keep-alive load on each in turn, ratio per
 * pair, median of the ratios; after each pair the output's backlog is waited out. The output's work is in its collector's process, so its CPU counts.
 */
export async function outputIngestRows(
  ctx: BenchContext,
  root: string,
  /** Other builds (outputs.ts --base) with the same output, measured in every pair beside this one. */
  bases: { label: string; bin: string }[] = [],
): Promise<Row[]> {
  const dir = join(root, 'outputs-ab');
  mkdirSync(dir, { recursive: true });
  const sink = fork(join(ROOT, 'test/bench/webhook-sink.mjs'), [], { stdio: 'inherit' });
  const servers: { stop(): Promise<void> }[] = [];
  try {
    const port = await new Promise<number>((resolve) => sink.once('message', (m) => resolve(m as number)));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        outputs: { sink: { type: 'webhook', url: `http://127.0.0.1:${port}/sink` } },
      }),
    );
    const none = await startThreatcol('no output', join(dir, 'none'), ctx.pin);
    servers.push(none);
    const attached = await startThreatcol('one output', join(dir, 'output'), ctx.pin, {
      args: ['--config', config],
    });
    servers.push(attached);
    const others = [];
    for (const base of bases) {
      const other = await startThreatcol(base.label, join(dir, `base-${others.length}`), ctx.pin, {
        args: ['--config', config],
        bin: base.bin,
      });
      servers.push(other);
      others.push({ label: base.label, server: other, runs: [] as Measured[] });
    }
    const w = standardWorkload('firewall', ctx.seconds);
    await warmUp(ctx, [none, attached, ...others.map((o) => o.server)], none, w);
    const p: Pairs = { reference: [], threatcol: [], ratios: [] };
    const whole: Measured[] = [];
    for (let i = 0; i < ctx.pairs; i++) {
      p.reference.push(await ctx.worker.measure('autocannon', none, none, w));
      p.threatcol.push(await ctx.worker.measure('autocannon', attached, attached, w));
      // The output goes on forwarding what the run stored after it ended, on the CPU both collectors share:
      // waited out, so it does not load the next pair's run without an output.
      whole.push(await withBacklog(sink, attached.pid, p.threatcol.at(-1) as Measured));
      for (const o of others) {
        const run = await ctx.worker.measure('autocannon', o.server, o.server, w);
        o.runs.push(await withBacklog(sink, o.server.pid, run));
      }
    }
    for (const o of others) {
      const ratios = o.runs.map((m, j) => m.recordsPerSecond / (p.reference[j] as Measured).recordsPerSecond);
      ctx.log(
        `  ${o.label} with the output: ${o.runs.map((m) => fmt.n(m.recordsPerSecond)).join(' ')} rec/s, ` +
          `${fmt.x(median(ratios))} of none, ${fmt.n(cpuPerRequest(o.runs))} us CPU per request with its backlog`,
      );
    }
    p.ratios = pairRatios(p, (m) => m.recordsPerSecond);
    ctx.runs['13 outputs A/B [autocannon]'] = p;
    const show = (ms: Measured[]) => ms.map((m) => fmt.n(m.recordsPerSecond)).join(' ');
    ctx.log(`  none ${show(p.reference)} | one output ${show(p.threatcol)} rec/s`);
    const ratio = median(p.ratios);
    const posts = await postsOf(sink);
    // Without batches at the sink the row would measure a collector with an idle output: no figure then.
    if (posts === 0) throw new Error('figure 13: the output forwarded nothing to the sink');
    ctx.log(`  the output posted ${fmt.n(posts)} batches to the sink`);
    return [
      {
        figure: '13 keep-alive /firewall with one webhook output attached, against none, req/s',
        generator: 'autocannon',
        threatcol: fmt.n(median(p.threatcol.map((m) => m.recordsPerSecond))),
        reference: `${fmt.n(median(p.reference.map((m) => m.recordsPerSecond)))} (none)`,
        ratio: fmt.x(ratio),
        target: `>= ${INGEST_TARGET}x`,
        pass: ratio >= INGEST_TARGET,
      },
      {
        // CPU per request stays readable on a loaded box where req/s swings with the neighbours' work.
        figure:
          '13 the same, server CPU per request (none / one output: the req/s ratio on a saturated core)',
        generator: 'autocannon',
        threatcol: `${fmt.n(cpuPerRequest(p.threatcol))} us`,
        reference: `${fmt.n(cpuPerRequest(p.reference))} us (none)`,
        ratio: fmt.x(cpuPerRequest(p.reference) / cpuPerRequest(p.threatcol)),
        target: 'report',
        pass: null,
      },
      {
        // The whole cost of the output: what it forwarded after the run too (the backlog, waited out).
        figure: '13 the same, server CPU per request, with the backlog the output forwarded after the run',
        generator: 'autocannon',
        threatcol: `${fmt.n(cpuPerRequest(whole))} us`,
        reference: `${fmt.n(cpuPerRequest(p.reference))} us (none)`,
        ratio: fmt.x(cpuPerRequest(p.reference) / cpuPerRequest(whole)),
        target: 'report',
        pass: null,
      },
    ];
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    sink.kill();
  }
}
