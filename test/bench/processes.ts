// Starts the servers under test (threatcol's real binary, the bare reference) pinned to a core, and reads
// their CPU time and memory from /proc.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { BIN, cleanEnv, runCli } from '../helpers/cli.js';

export { BIN };
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Server on one core, load generators on another, when taskset exists and there are 2+ cores. */
export interface Pinning {
  pinned: boolean;
  serverCpu: string;
  loadCpu: string;
  reason: string;
}

export function detectPinning(): Pinning {
  const n = cpus().length;
  if (n < 2) return { pinned: false, serverCpu: '', loadCpu: '', reason: 'not pinned: one core only' };
  // BENCH_PIN=off: server and load share every core (the server's threads may use the load's idle time).
  if (process.env.BENCH_PIN === 'off')
    return { pinned: false, serverCpu: '', loadCpu: '', reason: 'not pinned: BENCH_PIN=off' };
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
  } catch {
    return { pinned: false, serverCpu: '', loadCpu: '', reason: 'not pinned: taskset not available' };
  }
  const server = String(n - 1);
  return {
    pinned: true,
    serverCpu: server,
    loadCpu: '0',
    reason: `pinned: server on CPU ${server}, load on CPU 0`,
  };
}

/**
 * The command line to run node (`node`: another runtime, default this one) with `args` on `cpu` (taskset execs
 * node: the pid stays node's).
 */
export function pinned(
  cpu: string,
  args: string[],
  node: string = process.execPath,
): { cmd: string; args: string[] } {
  if (cpu === '') return { cmd: node, args };
  return { cmd: 'taskset', args: ['-c', cpu, node, ...args] };
}

export interface ServerUnderTest {
  name: string;
  pid: number;
  url: string;
  certPath: string;
  keyPath: string;
  stop(): Promise<void>;
}

export interface ThreatcolServer extends ServerUnderTest {
  dataDir: string;
  sensor: string;
  key: string;
  keyFile: string;
  fingerprint: string;
}

/** `threatcol serve` from the compiled binary, rate limit off, in `dataDir`, with sensor `bench`. */
export async function startThreatcol(
  name: string,
  dataDir: string,
  pin: Pinning,
  options: {
    env?: Record<string, string>;
    nodeArgs?: string[];
    /** Another Node runtime to run serve on (figure 16), default this one. */
    node?: string;
    bin?: string;
    args?: string[];
    /** Logging below info (no "listening" line): the port is read from /proc; the admin listener is off. */
    quiet?: boolean;
  } = {},
): Promise<ThreatcolServer> {
  // Dedupe off: the rows measure storing, comparable with the runs before the generators sent distinct
  // records (test/bench/payloads.ts); test/bench/dedupe-ab.ts measures what deduplication costs. The bodies
  // are distinct, so THREATCOL_DEDUPE_WINDOW_SECONDS in options.env may turn it on (as shipped) safely.
  const env = {
    THREATCOL_RATE_LIMIT_RECORDS_PER_SECOND: '0',
    THREATCOL_RATE_LIMIT_BYTES_PER_SECOND: '0',
    THREATCOL_DEDUPE_WINDOW_SECONDS: '0',
    ...options.env,
  };
  const args = [
    ...(options.nodeArgs ?? []),
    options.bin ?? BIN,
    'serve',
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
  ];
  // Several collectors run at once: each gets its own admin port (metrics on, as shipped), never 9441.
  args.push('--port', '0', '--log-format', 'json', '--admin-listen', options.quiet ? '' : '127.0.0.1:0');
  args.push(...(options.args ?? []));
  const child = spawnPinned(pin.pinned ? pin.serverCpu : '', args, env, options.node);
  const listening = options.quiet
    ? { port: await waitForListening(child, name), sha256: '' }
    : await waitForLine(child, (line) => line.includes('"threatcol is listening"'), name);
  const sensor = 'bench';
  const keyFile = join(dataDir, 'bench.key');
  let key: string;
  if (existsSync(keyFile)) key = readFileSync(keyFile, 'utf8').trim();
  else {
    // The same backend as serve's (a NATS-backed collector's registry is the KV bucket, not the data dir).
    const r = await runCli(['sensor', 'add', sensor, '--data-dir', dataDir, '--json'], {
      env: options.env ?? {},
    });
    if (r.code !== 0) throw new Error(`sensor add failed (${r.code}): ${r.stderr}`);
    key = (JSON.parse(r.stdout) as { key: string }).key;
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  }
  return {
    name,
    pid: child.pid as number,
    url: `https://127.0.0.1:${listening.port as number}`,
    dataDir,
    sensor,
    key,
    keyFile,
    fingerprint: String(listening.sha256),
    certPath: join(dataDir, 'tls', 'cert.pem'),
    keyPath: join(dataDir, 'tls', 'key.pem'),
    stop: () => stopChild(child, name),
  };
}

/**
 * The same server seen through a second sensor, added with `--timezone zone`: most firewalls log in local
 * time, so their records take the time-zone conversion the UTC sensor skips.
 */
export async function zonedSensor(server: ThreatcolServer, zone: string): Promise<ThreatcolServer> {
  const sensor = `bench-${zone.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}`;
  const keyFile = join(server.dataDir, `${sensor}.key`);
  let key: string;
  if (existsSync(keyFile)) key = readFileSync(keyFile, 'utf8').trim();
  else {
    const r = await runCli([
      'sensor',
      'add',
      sensor,
      '--timezone',
      zone,
      '--data-dir',
      server.dataDir,
      '--json',
    ]);
    if (r.code !== 0) throw new Error(`sensor add failed (${r.code}): ${r.stderr}`);
    key = (JSON.parse(r.stdout) as { key: string }).key;
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  }
  return { ...server, sensor, key, keyFile };
}

/** The bare node:https reference with the given certificate. */
export function startReference(
  name: string,
  certPath: string,
  keyPath: string,
  pin: Pinning,
): Promise<ServerUnderTest> {
  return startScript(name, 'reference-server.mjs', certPath, keyPath, [], pin);
}

/**
 * The measured bound (bound-server.mjs): the reference plus one JSON parse and validation per request and one
 * write + fdatasync per group commit into `dir`, nothing else; what a durable collector cannot go below.
 */
export function startBound(
  name: string,
  certPath: string,
  keyPath: string,
  dir: string,
  pin: Pinning,
  nodeArgs: string[] = [],
): Promise<ServerUnderTest> {
  return startScript(name, 'bound-server.mjs', certPath, keyPath, [dir], pin, nodeArgs);
}

/**
 * The contract bound (contract-bound-server.mjs): the bound plus what the contract makes every request do
 * (authentication, the stored record of DESIGN 3 as one line, the ids in the answer), for `sensors` (each as
 * `sensor add` made it, with its time zone).
 */
export function startContractBound(
  name: string,
  certPath: string,
  keyPath: string,
  dir: string,
  sensors: { sensor: string; key: string; timezone: string }[],
  pin: Pinning,
  nodeArgs: string[] = [],
): Promise<ServerUnderTest> {
  const registry = sensors.map((s) => `${s.sensor}:${s.key}:${s.timezone}`);
  return startScript(name, 'contract-bound-server.mjs', certPath, keyPath, [dir, ...registry], pin, nodeArgs);
}

/** One of test/bench's plain-JS servers (bench-server.mjs), given the certificate; it prints {"port"}. */
async function startScript(
  name: string,
  script: string,
  certPath: string,
  keyPath: string,
  args: string[],
  pin: Pinning,
  nodeArgs: string[] = [],
): Promise<ServerUnderTest> {
  const path = join(ROOT, 'test/bench', script);
  const child = spawnPinned(
    pin.pinned ? pin.serverCpu : '',
    [...nodeArgs, path, certPath, keyPath, ...args],
    {},
  );
  const { port } = await waitForLine(child, (line) => line.startsWith('{"port"'), name);
  return {
    name,
    pid: child.pid as number,
    url: `https://127.0.0.1:${port as number}`,
    certPath,
    keyPath,
    stop: () => stopChild(child, name),
  };
}

function spawnPinned(cpu: string, args: string[], env: Record<string, string>, node?: string): ChildProcess {
  const { cmd, args: argv } = pinned(cpu, args, node);
  return spawn(cmd, argv, { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The TCP ports `pid` listens on: its socket inodes (/proc/PID/fd) matched in /proc/net/tcp and tcp6. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1] as string);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // st 0A: LISTEN; column 9: the socket's inode.
      if (cols[3] === '0A' && inodes.has(cols[9] ?? ''))
        ports.push(Number.parseInt(cols[1]?.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/** Resolves with the port a server that logs nothing on start listens on, once it listens (30 s at most). */
async function waitForListening(child: ChildProcess, name: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    if (err.length < 10_000) err += d;
  });
  child.stdout?.resume();
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited early (${child.exitCode}): ${err}`);
    const ports = child.pid === undefined ? [] : listeningPorts(child.pid);
    if (ports.length > 0) return ports[0] as number;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not listen in time: ${err}`);
}

/** Resolves with the first stdout JSON line that `match`es; later output is drained and dropped. */
function waitForLine(
  child: ChildProcess,
  match: (line: string) => boolean,
  name: string,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    let found = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in time: ${err}`));
    }, 30_000);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      if (err.length < 10_000) err += d;
      if (process.env.BENCH_DEBUG) process.stderr.write(d);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!found) reject(new Error(`${name} exited early (${code ?? signal}): ${err}`));
    });
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (process.env.BENCH_DEBUG) process.stderr.write(d);
      if (found) return;
      out += d;
      for (const line of out.split('\n')) {
        if (!match(line)) continue;
        found = true;
        clearTimeout(timer);
        resolve(JSON.parse(line) as Record<string, unknown>);
        return;
      }
    });
  });
}

function stopChild(child: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${name} stopped with ${code ?? signal}`));
    });
    child.kill('SIGTERM');
  });
}

const TICKS = 100; // USER_HZ, 100 on every Linux this runs on.

/**
 * CPU seconds (user + system) the process and its live children (the workers of `serve --workers`) have
 * used so far. A child that dies during a run takes its time with it: the runs here restart none.
 */
export function cpuSeconds(pid: number): number {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / TICKS;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** CPU seconds (user + system) of the main thread of `pid` alone, the one serve takes records on. */
export function mainThreadSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** `pid` and its descendants, from /proc/<pid>/task/<tid>/children. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const p = out[i] as number;
    try {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8').trim();
        if (children !== '') out.push(...children.split(' ').map(Number));
      }
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Current and peak resident set size in bytes. */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * Keep-alive POSTs of `nextBody()` to /firewall over `connections` connections for `seconds`: requests per second
 * and the server's CPU seconds per request. A request answered other than 200, or whose answer `refuse` names,
 * stops the run (an A/B measures only what was stored).
 */
export async function keepAliveFirewallLoad(
  server: ThreatcolServer,
  options: {
    connections: number;
    seconds: number;
    nextBody: () => string;
    refuse?: (text: string) => boolean;
  },
): Promise<{ rps: number; cpuSecondsPerRequest: number; requests: number }> {
  const pool = new Pool(server.url, {
    connections: options.connections,
    connect: { rejectUnauthorized: false },
  });
  const headers = {
    'content-type': 'application/json',
    'x-auth_key': server.key,
    'x-sensor_name': server.sensor,
  };
  const cpu0 = cpuSeconds(server.pid);
  const end = performance.now() + options.seconds * 1000;
  let done = 0;
  const client = async () => {
    while (performance.now() < end) {
      const res = await pool.request({
        method: 'POST',
        path: '/firewall',
        headers,
        body: options.nextBody(),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200 || options.refuse?.(text)) throw new Error(`${res.statusCode} ${text}`);
      done += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: options.connections }, client));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(server.pid) - cpu0;
  await pool.close();
  return { rps: done / elapsed, cpuSecondsPerRequest: cpu / done, requests: done };
}

const PERF_HZ = 1999;

/**
 * perf(1) sampling the whole process `pid` (kernel included) into `data` until `stop()`, which gives the self
 * µs by symbol of its threads named `comm` (15 characters at most, as /proc/PID/task/TID/comm shows them) and
 * removes `data`. JIT code is named only when the process runs with `--perf-basic-prof`.
 */
export function recordPerf(
  pid: number,
  data: string,
  comm: string,
): { stop(): Promise<Map<string, number>> } {
  const recording = spawn(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', String(PERF_HZ), '-p', String(pid), '-o', data],
    {
      stdio: 'ignore',
    },
  );
  return {
    async stop() {
      recording.kill('SIGINT');
      await new Promise((resolve) => recording.once('exit', resolve));
      const report = execFileSync(
        'perf',
        [
          'report',
          '-i',
          data,
          '--no-children',
          '--comms',
          comm,
          '--sort',
          'sym',
          '--stdio',
          '-F',
          'sample,sym',
        ],
        { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] },
      ).toString();
      rmSync(data, { force: true });
      const us = new Map<string, number>();
      for (const line of report.split('\n')) {
        const m = /^\s*(\d+)\s+(.*)$/.exec(line);
        if (m) us.set(m[2] as string, (us.get(m[2] as string) ?? 0) + (1e6 / PERF_HZ) * Number(m[1]));
      }
      return us;
    },
  };
}
