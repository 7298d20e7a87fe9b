// A flood of TCP sockets that send nothing and reconnect as soon as they are closed, from several loopback
// addresses, run in a child process of its own so the flood does not share the test's event loop.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { until } from './until.js';

const FLOOD = `
const { connect } = require('node:net');
const [port, addresses, perAddress] = [Number(process.argv[1]), process.argv[2].split(','), Number(process.argv[3])];
let connects = 0;
let stopping = false;
function open(localAddress) {
  if (stopping) return;
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  connects++;
  socket.on('error', () => {});
  socket.on('close', () => setImmediate(open, localAddress));
}
for (const address of addresses) for (let i = 0; i < perAddress; i++) open(address);
setInterval(() => process.stdout.write(JSON.stringify({ connects }) + '\\n'), 200);
process.on('SIGTERM', () => { stopping = true; process.stdout.write(JSON.stringify({ connects }) + '\\n'); process.exit(0); });
`;

export interface SilentSockets {
  /** Connections opened so far (as last reported by the child, every 200 ms). */
  connects(): number;
  stop(): Promise<void>;
}

/** `perAddress` silent sockets from each of `addresses` to 127.0.0.1:`port`, each reopened when closed. */
export function floodSilentSockets(
  t: { after(fn: () => unknown): void },
  port: number,
  addresses: string[],
  perAddress: number,
): SilentSockets {
  const child: ChildProcess = spawn(
    process.execPath,
    ['-e', FLOOD, String(port), addresses.join(','), String(perAddress)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let connects = 0;
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    buffered += text;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line) connects = (JSON.parse(line) as { connects: number }).connects;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  t.after(stop);
  return { connects: () => connects, stop };
}

/** A socket the test opened, and when it closed. */
export interface HeldSocket {
  socket: Socket;
  closed: Promise<void>;
}

/**
 * `n` plain TCP sockets to 127.0.0.1:`port`, opened one after another, that send nothing; `settleMs` after each
 * connect so the server (or, under --workers, the primary) has taken it before the next one comes.
 */
export async function openSilentSockets(port: number, n: number, settleMs = 50): Promise<HeldSocket[]> {
  const out: HeldSocket[] = [];
  for (let i = 0; i < n; i++) {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    out.push({ socket, closed });
  }
  return out;
}

/** Waits for the oldest of `sockets` to be closed by the server, then asserts the others stay open. */
export async function onlyOldestClosed(sockets: readonly HeldSocket[]): Promise<void> {
  await until(() => sockets[0]?.socket.destroyed === true, 10_000, 'the oldest socket closed');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(
    sockets.map((s) => s.socket.destroyed),
    [true, ...sockets.slice(1).map(() => false)],
    'the oldest socket made room, the others stay',
  );
}
