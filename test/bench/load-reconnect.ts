// New TLS connection per request (`Connection: close`), like a firewall that does not reuse connections;
// optionally resuming the previous TLS session of the same client loop. Every request a new body.
import { connect, createSecureContext, type TLSSocket } from 'node:tls';
import { type LoadResult, percentile } from './load-result.js';
import { type Payload, payloadBodies } from './payloads.js';

export interface ReconnectOptions {
  url: string;
  path: string;
  headers: Record<string, string>;
  payload: Payload;
  connections: number;
  durationSec: number;
  resume: boolean;
  maxVersion: 'TLSv1.2' | 'TLSv1.3';
}

export async function runReconnect(o: ReconnectOptions): Promise<LoadResult> {
  const target = new URL(o.url);
  const port = Number(target.port);
  let head = `POST ${o.path} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n`;
  for (const [k, v] of Object.entries(o.headers)) head += `${k}: ${v}\r\n`;
  const next = payloadBodies(o.payload);
  const request = () => {
    const body = next();
    return Buffer.concat([Buffer.from(`${head}Content-Length: ${body.length}\r\n\r\n`), body]);
  };
  // One context for every connection: building one per connect costs the client more than the handshake.
  const secureContext = createSecureContext({ maxVersion: o.maxVersion });
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let resumed = 0;

  const once = (session: Buffer | undefined): Promise<Buffer | undefined> =>
    new Promise((resolve) => {
      // Made before the clock starts: the handshake and the answer are what is timed.
      const bytes = request();
      const started = performance.now();
      let resumeWith = session;
      let reply = '';
      const socket: TLSSocket = connect({
        host: target.hostname,
        port,
        rejectUnauthorized: false,
        secureContext,
        ...(session ? { session } : {}),
      });
      socket.setEncoding('latin1');
      socket.on('session', (s: Buffer) => {
        resumeWith = s;
      });
      socket.once('secureConnect', () => {
        if (socket.isSessionReused()) resumed += 1;
        socket.write(bytes);
      });
      socket.on('data', (d: string) => {
        if (reply.length < 16) reply += d;
      });
      socket.on('error', () => {});
      socket.on('close', () => {
        const status = Number(reply.slice(9, 12));
        if (reply === '') errors += 1;
        else if (status >= 200 && status < 300) {
          ok += 1;
          latencies.push(performance.now() - started);
        } else non2xx += 1;
        resolve(o.resume ? resumeWith : undefined);
      });
    });

  const start = performance.now();
  const deadline = start + o.durationSec * 1000;
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      let session: Buffer | undefined;
      while (performance.now() < deadline) session = await once(session);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    generator: o.resume ? 'reconnect+resume' : 'reconnect',
    requests: ok,
    records: ok,
    durationMs: seconds * 1000,
    requestsPerSecond: ok / seconds,
    recordsPerSecond: ok / seconds,
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? 0,
    },
    non2xx,
    errors,
    resumed,
  };
}
