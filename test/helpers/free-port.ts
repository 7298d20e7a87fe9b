// Ports for servers a test must name before they start (a sender configured first, a restart on the same port,
// a cluster's routes). Picked below the kernel's ephemeral range (ip_local_port_range): a port taken from that
// range and let go is free for anything bound to port 0 and for every outgoing connection's source port, so
// under a busy suite another test took it between the pick and the bind (EADDRINUSE). Below the range only
// another pick can; picks are random and each is checked free by binding it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;
const given = new Set<number>();

/** The first port of the kernel's ephemeral range (32768 where it cannot be read). */
function ephemeralStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > LOWEST + 1000) return low;
  } catch {}
  return 32_768;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback TCP port nothing listens on, outside the range the kernel hands out by itself. */
export async function freeLoopbackPort(): Promise<number> {
  const span = ephemeralStart() - LOWEST;
  for (let tries = 0; tries < 200; tries++) {
    const port = LOWEST + Math.floor(Math.random() * span);
    if (given.has(port)) continue;
    if (await bindable(port)) {
      given.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port in ${LOWEST}-${LOWEST + span - 1}`);
}
