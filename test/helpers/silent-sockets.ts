// A flood of TCP sockets that send nothing and reconnect as soon as they are closed, from several loopback
// addresses, run in a child process of its own so the flood does not share the test's event loop.
import { type ChildProcess, spawn } from 'node:child_process';

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
