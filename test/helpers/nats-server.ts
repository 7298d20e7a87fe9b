// Real nats-server processes for tests: one JetStream node or a 3-node routed cluster on free loopback
// ports with temporary store directories; kill -9, stop and restart on the same ports and directories.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';
import { guard, watched } from './children.js';
import { freeLoopbackPort } from './free-port.js';
import { makeTempDir } from './temp-dir.js';

/** Debian installs it in /usr/sbin; NATS_SERVER_BIN overrides. */
export const NATS_SERVER =
  process.env.NATS_SERVER_BIN ??
  ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => existsSync(p)) ??
  'nats-server';

/** A free loopback port (test/helpers/free-port.ts), for a node that restarts on the same port. */
export const freePort = freeLoopbackPort;

export interface NatsNode {
  name: string;
  port: number;
  url: string;
  storeDir: string;
  readonly running: boolean;
  /** The process id while it runs (to pause it with SIGSTOP: a server that stalls with publishes on the wire). */
  readonly pid: number | undefined;
  /** Starts the process (again, on the same port and store directory) and waits until it listens. */
  start(): Promise<void>;
  /** kill -9. */
  kill(): Promise<void>;
  /** SIGTERM (lame duck would take too long in tests), waits for the exit. */
  stop(): Promise<void>;
  log(): string;
}

function makeNode(name: string, port: number, storeDir: string, extra: () => string[]): NatsNode {
  let child: ChildProcess | null = null;
  let output = '';
  let exited: Promise<void> = Promise.resolve();
  const node: NatsNode = {
    name,
    port,
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    get running() {
      return child !== null;
    },
    get pid() {
      return child?.pid;
    },
    start() {
      mkdirSync(storeDir, { recursive: true });
      const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, '-n', name, ...extra()];
      const argv = watched([NATS_SERVER, ...args]);
      const proc = guard(spawn(argv[0] as string, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }));
      child = proc;
      exited = new Promise((resolve) => proc.on('exit', () => resolve()));
      void exited.then(() => {
        if (child === proc) child = null;
      });
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`nats-server ${name} did not start: ${output}`)),
          20_000,
        );
        const onData = (d: Buffer) => {
          output += d.toString();
          if (output.includes('Server is ready')) {
            clearTimeout(timer);
            resolve();
          }
        };
        proc.stdout?.on('data', onData);
        proc.stderr?.on('data', onData);
        proc.on('error', (error) => {
          clearTimeout(timer);
          reject(new Error(`cannot start ${NATS_SERVER}: ${error.message}`));
        });
        proc.on('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`nats-server ${name} exited (${code}): ${output}`));
        });
      });
    },
    async kill() {
      child?.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child?.kill('SIGTERM');
      await exited;
    },
    log: () => output,
  };
  return node;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every node's client URL. */
  servers: string[];
  stop(): Promise<void>;
}

/** One JetStream node, not started yet (its port is chosen): for a collector that starts before NATS. */
export async function createNatsServer(
  t: { after(fn: () => void | Promise<void>): void },
  extraArgs: string[] = [],
): Promise<NatsNode> {
  const dir = makeTempDir(t, 'threatcol-nats-');
  const node = makeNode('n1', await freePort(), join(dir, 'store'), () => extraArgs);
  // Ended with the file's other children (children.ts), after every test's own hooks: an after() hook here would
  // run before the test's "stop the collector" hook (hooks run in the order added), and each collector would then
  // stop against a dead server, waiting out its request timeouts.
  return node;
}

/** One JetStream node, started. */
export async function startNatsServer(
  t: { after(fn: () => void | Promise<void>): void },
  extraArgs: string[] = [],
): Promise<NatsNode> {
  const node = await createNatsServer(t, extraArgs);
  await node.start();
  return node;
}

/**
 * One JetStream node, started, and a collector's configuration on it: the NATS backend, a temporary data
 * directory, a 1.5 s publish timeout unless `overrides` say otherwise.
 */
export async function natsBackend(
  t: { after(fn: () => void | Promise<void>): void },
  overrides: Record<string, unknown> = {},
): Promise<{ node: NatsNode; dataDir: string; config: Config }> {
  const node = await startNatsServer(t);
  const dataDir = makeTempDir(t);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: {
      dataDir,
      'store.backend': 'nats',
      'nats.servers': [node.url],
      'nats.publishTimeoutMs': 1500,
      ...overrides,
    },
  });
  return { node, dataDir, config };
}

/** A routed cluster of `size` JetStream nodes; resolves once JetStream has a meta leader. */
export async function startNatsCluster(
  t: { after(fn: () => void | Promise<void>): void },
  size = 3,
): Promise<NatsCluster> {
  const dir = makeTempDir(t, 'threatcol-natscl-');
  const ports = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(',');
  const nodes = ports.map((port, i) =>
    makeNode(`n${i + 1}`, port, join(dir, `n${i + 1}`), () => [
      '--cluster_name',
      'threatcol-test',
      '--cluster',
      `nats://127.0.0.1:${routePorts[i]}`,
      '--routes',
      routes,
    ]),
  );
  const cluster: NatsCluster = {
    nodes,
    servers: nodes.map((n) => n.url),
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
    },
  };
  // Ended with the file's other children (see createNatsServer).
  await Promise.all(nodes.map((n) => n.start()));
  await waitForJetStream(cluster.servers);
  return cluster;
}

/** Waits until JetStream answers account info through these servers (a meta leader exists). */
export async function waitForJetStream(servers: string[], timeoutMs = 30_000): Promise<void> {
  const nc = await connect({ servers, timeout: 5000 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2000 });
        await jsm.getAccountInfo();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    await nc.close();
  }
}

/**
 * Every message in a stream, read directly (an ordered consumer), independent of threatcol's reader. Retried
 * while a cluster that has just had nodes back elects its leaders ("JetStream system temporarily unavailable").
 */
export async function readStream(
  servers: string[],
  stream = 'THREATCOL',
  timeoutMs = 30_000,
): Promise<{ seq: number; text: string }[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await readStreamOnce(servers, stream);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

async function readStreamOnce(servers: string[], stream: string): Promise<{ seq: number; text: string }[]> {
  const nc = await connect({ servers, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 10_000 });
    const { state } = await jsm.streams.info(stream);
    const out: { seq: number; text: string }[] = [];
    if (state.messages === 0) return out;
    const consumer = await jetstream(nc, { timeout: 10_000 }).consumers.get(stream);
    while ((out.at(-1)?.seq ?? 0) < state.last_seq) {
      const batch = await consumer.fetch({ max_messages: 1000, expires: 5000 });
      let got = 0;
      for await (const msg of batch) {
        got++;
        out.push({ seq: msg.seq, text: msg.string() });
      }
      if (got === 0) throw new Error(`stream ${stream}: read ${out.length} of ${state.messages} messages`);
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** The name of the node leading a stream, e.g. "n2". */
export async function streamLeader(servers: string[], stream = 'THREATCOL'): Promise<string> {
  const nc = await connect({ servers, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 10_000 });
    const leader = (await jsm.streams.info(stream)).cluster?.leader;
    if (!leader) throw new Error(`stream ${stream} has no leader`);
    return leader;
  } finally {
    await nc.close();
  }
}
