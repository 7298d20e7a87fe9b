// Figure 14 (issue 29): syslog over TLS with octet counting, distinct cef and panos messages, in messages per
// second of server CPU, beside a bare node:tls reader that only frames and counts (the platform's ceiling) and
// Debian's syslog-ng writing the same load to a file (a peer), alternated reader, threatcol, syslog-ng.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cleanEnv, runCli } from '../helpers/cli.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import type { BenchContext } from './figures-load.js';
import { cpuSeconds, listeningPorts, pinned, ROOT, startThreatcol } from './processes.js';
import { fmt, median, type Row } from './report.js';
import { startSyslogNg, unpackSyslogNg } from './syslog-ng.js';

const run = promisify(execFile);
const TARGET = 100_000;
export const FORMATS = ['cef', 'panos'] as const;
const CONNECTIONS = 4;

/** A server the load goes to: its pid (CPU), port, and how many messages it has taken in all so far. */
export interface Receiver {
  name: string;
  pid: number;
  port: number;
  taken(format: string): Promise<number>;
}

/** One run: COUNT messages from the loader (pinned to the load core), then until `to` has taken them all. */
export async function measure(
  ctx: BenchContext,
  to: Receiver,
  format: string,
  count: number,
  seed: number,
  cert: { certPath: string; keyPath: string },
): Promise<{ perCpuSecond: number; wallSeconds: number }> {
  const before = await to.taken(format);
  const cpu0 = cpuSeconds(to.pid);
  const script = join(ROOT, 'test/bench/syslog-load.mjs');
  const { cmd, args } = pinned(ctx.pin.pinned ? ctx.pin.loadCpu : '', [
    script,
    String(to.port),
    cert.certPath,
    cert.keyPath,
    format,
    String(count),
    String(CONNECTIONS),
    String(seed),
  ]);
  const started = performance.now();
  await run(cmd, args, { cwd: ROOT, timeout: 300_000 });
  const deadline = Date.now() + 120_000;
  for (let taken = await to.taken(format); taken < before + count; taken = await to.taken(format)) {
    if (Date.now() > deadline) throw new Error(`${to.name} took ${taken - before} of ${count} ${format}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const wallSeconds = (performance.now() - started) / 1000;
  return { perCpuSecond: count / Math.max(0.01, cpuSeconds(to.pid) - cpu0), wallSeconds };
}

/** The bare reader (syslog-reader.mjs), pinned like a server; `taken` is its last printed total. */
async function startReader(ctx: BenchContext, certPath: string, keyPath: string) {
  const { cmd, args } = pinned(ctx.pin.pinned ? ctx.pin.serverCpu : '', [
    join(ROOT, 'test/bench/syslog-reader.mjs'),
    certPath,
    keyPath,
  ]);
  const child: ChildProcess = spawn(cmd, args, {
    cwd: ROOT,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let count = 0;
  let rest = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bare reader exited (${code})`)));
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        const m = JSON.parse(line) as { port?: number; count?: number };
        if (m.port !== undefined) resolve(m.port);
        if (m.count !== undefined) count = m.count;
      }
    });
  });
  const reader: Receiver = {
    name: 'bare node:tls reader',
    pid: child.pid as number,
    port,
    taken: async () => count,
  };
  return { reader, stop: () => child.kill('SIGTERM') };
}

/** threatcol's stored counter per format from /metrics (a sensor per format, each pinned to its certificate). */
function storedFrom(adminUrl: string) {
  return async (format: string): Promise<number> => {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('threatcol_syslog_messages_stored_total{') && l.includes(`sensor="syslog-${format}"`),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
}

/** Client certificates, one per format, each pinned by its own sensor `syslog-FORMAT`. */
export function clientCertificates(dir: string): Record<string, { certPath: string; keyPath: string }> {
  return Object.fromEntries(
    FORMATS.map((format) => {
      const cert = { certPath: join(dir, `${format}.pem`), keyPath: join(dir, `${format}.key`) };
      writeSelfSigned(cert.certPath, cert.keyPath, { cn: `syslog-${format}` });
      return [format, cert];
    }),
  );
}

/** `serve` (this build, or `bin`) with syslog over TLS and a sensor per format pinning its certificate. */
export async function startSyslogCollector(
  ctx: BenchContext,
  tcDir: string,
  name: string,
  certs: Record<string, { certPath: string }>,
  bin?: string,
) {
  for (const format of FORMATS) {
    const cert = certs[format] as { certPath: string };
    const r = await runCli([
      'sensor',
      'add',
      `syslog-${format}`,
      '--syslog',
      '--format',
      format,
      '--client-cert',
      cert.certPath,
      '--data-dir',
      tcDir,
    ]);
    if (r.code !== 0) throw new Error(`sensor add failed (${r.code}): ${r.stderr}`);
  }
  const syslogPort = await freeLoopbackPort();
  const server = await startThreatcol(name, tcDir, ctx.pin, {
    env: { THREATCOL_SYSLOG_LISTEN: `127.0.0.1:${syslogPort}` },
    ...(bin === undefined ? {} : { bin }),
  });
  const httpsPort = Number(new URL(server.url).port);
  const adminPort = listeningPorts(server.pid).find((p) => p !== httpsPort && p !== syslogPort);
  const receiver: Receiver = {
    name,
    pid: server.pid,
    port: syslogPort,
    taken: storedFrom(`http://127.0.0.1:${adminPort}`),
  };
  return { receiver, server, stop: () => server.stop() };
}

export async function syslogRows(ctx: BenchContext, root: string): Promise<Row[]> {
  const dir = join(root, 'syslog');
  mkdirSync(dir, { recursive: true });
  const count = ctx.quick ? 50_000 : 200_000;
  const stops: (() => unknown)[] = [];
  try {
    const certs = clientCertificates(dir);
    const collector = await startSyslogCollector(ctx, join(dir, 'threatcol'), 'threatcol', certs);
    stops.push(collector.stop);
    const threatcol = collector.receiver;
    const tc = collector.server;
    const bare = await startReader(ctx, tc.certPath, tc.keyPath);
    stops.push(bare.stop);
    const receivers = [bare.reader, threatcol];
    let peer: Receiver | null = null;
    try {
      const sngRoot = unpackSyslogNg(join(tmpdir(), 'threatcol-bench-syslog-ng'));
      const sng = await startSyslogNg(sngRoot, join(dir, 'syslog-ng'), tc.certPath, tc.keyPath, ctx.pin);
      stops.push(() => sng.stop());
      peer = { name: 'syslog-ng', pid: sng.pid, port: sng.port, taken: async () => sng.written() };
      receivers.push(peer);
    } catch (error) {
      ctx.log(`  figure 14: the syslog-ng column is skipped: ${(error as Error).message}`);
    }

    // Each run's messages carry times of their own, a millisecond apart: distinct from every other run's.
    let runsStarted = 0;
    const nextSeed = () => Date.UTC(2026, 0, 1) + count * runsStarted++;
    const rows: Row[] = [];
    for (const format of FORMATS) {
      const cert = certs[format] as { certPath: string; keyPath: string };
      // Warm-up: the JIT, the first segment, syslog-ng's first file write.
      for (const to of receivers) await measure(ctx, to, format, Math.round(count / 4), nextSeed(), cert);
      const runs = new Map<string, number[]>(receivers.map((r) => [r.name, []]));
      for (let i = 0; i < ctx.pairs; i++) {
        for (const to of receivers) {
          const m = await measure(ctx, to, format, count, nextSeed(), cert);
          runs.get(to.name)?.push(m.perCpuSecond);
          ctx.log(
            `  ${format} ${to.name}: ${fmt.n(m.perCpuSecond)} msg/CPU-s, ${m.wallSeconds.toFixed(2)} s wall`,
          );
        }
      }
      const tcRuns = runs.get('threatcol') ?? [];
      const ratioTo = (name: string) =>
        median(tcRuns.map((v, i) => v / ((runs.get(name) ?? [])[i] ?? Number.NaN)));
      const what = `14 syslog over TLS, octet-counted, distinct ${format}, ${CONNECTIONS} connections x ${fmt.n(count / CONNECTIONS)}`;
      rows.push({
        figure: `${what}, messages per server CPU second, against a bare node:tls reader`,
        generator: 'syslog-load',
        threatcol: fmt.n(median(tcRuns)),
        reference: `${fmt.n(median(runs.get(bare.reader.name) ?? []))} (reader)`,
        ratio: fmt.x(ratioTo(bare.reader.name)),
        target: `>= ${fmt.n(TARGET)}`,
        pass: median(tcRuns) >= TARGET,
      });
      if (peer !== null)
        rows.push({
          figure: `${what}, against syslog-ng to a file (threatcol also parses, authenticates, fsyncs)`,
          generator: 'syslog-load',
          threatcol: fmt.n(median(tcRuns)),
          reference: `${fmt.n(median(runs.get(peer.name) ?? []))} (syslog-ng)`,
          ratio: fmt.x(ratioTo(peer.name)),
          target: 'report',
          pass: null,
        });
    }
    return rows;
  } finally {
    for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => {});
  }
}
