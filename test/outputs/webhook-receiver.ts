// A loopback webhook receiver for the output tests: records what it was sent, checks the signature, and can
// be down (503), slow, or refuse batches holding a marked record (400), as a real endpoint would; or hostile:
// taking each batch then answering 200 with a body that never ends (`endless`) or comes a byte at a time
// (`trickle`), or answering every batch with a redirect (`redirect`, 302).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceiverMode = 'down' | 'up' | 'unauthorized' | 'endless' | 'trickle' | 'redirect';

export interface TestReceiver {
  url: string;
  mode: ReceiverMode;
  /** Delay before each answer (ms). */
  delayMs: number;
  /** Ids per delivery count: every 2xx batch's records. */
  accepted: Map<string, number>;
  /** Ids in batches answered 400. */
  refused: Set<string>;
  bodies: { headers: IncomingMessage['headers']; body: string }[];
  badSignatures: number;
  /** Batches holding a record whose threat this matches are answered 400. */
  refuse: (threat: string) => boolean;
  /** Answers (`endless`, `trickle`) whose connection the client closed before the body ended. */
  cut: number;
  /** Bytes of hostile body written, all answers together. */
  hostileBytes: number;
  close(): Promise<void>;
}

export async function startReceiver(options: { secret?: string; refuse?: (threat: string) => boolean } = {}) {
  const receiver = {
    mode: 'up' as ReceiverMode,
    delayMs: 0,
    accepted: new Map<string, number>(),
    refused: new Set<string>(),
    bodies: [] as TestReceiver['bodies'],
    badSignatures: 0,
    refuse: options.refuse ?? (() => false),
    cut: 0,
    hostileBytes: 0,
  };
  const chunk = Buffer.alloc(64 * 1024, 'x');
  /** 200, then a body as fast as the client reads it (`endless`) or a byte every 50 ms (`trickle`), never ended. */
  const hostile = (res: ServerResponse, mode: 'endless' | 'trickle') => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.on('close', () => {
      if (!res.writableFinished) receiver.cut += 1;
    });
    if (mode === 'trickle') {
      const timer = setInterval(() => {
        receiver.hostileBytes += 1;
        res.write('x');
      }, 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    const pump = () => {
      while (!res.destroyed) {
        receiver.hostileBytes += chunk.length;
        if (!res.write(chunk)) return;
      }
    };
    res.on('drain', pump);
    pump();
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answer = (status: number, text = '') =>
        setTimeout(() => {
          res.writeHead(status, {
            'content-type': 'text/plain',
            ...(status === 503 ? { 'retry-after': '0' } : {}),
          });
          res.end(text);
        }, receiver.delayMs);
      if (receiver.mode === 'down') return answer(503, 'down for maintenance');
      if (receiver.mode === 'unauthorized') return answer(401, 'bad token');
      if (receiver.mode === 'redirect') {
        res.writeHead(302, { location: 'https://hooks.example/moved' });
        return res.end('moved');
      }
      receiver.bodies.push({ headers: req.headers, body });
      if (options.secret !== undefined) {
        const want = `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`;
        if (req.headers['x-threatcol-signature'] !== want) receiver.badSignatures += 1;
      }
      const parsed = JSON.parse(body) as { records?: { id: string; threat: string }[]; text?: string };
      const records = parsed.records ?? [];
      if (records.some((r) => receiver.refuse(r.threat))) {
        for (const r of records) receiver.refused.add(r.id);
        return answer(400, 'record refused by the test receiver');
      }
      for (const r of records) receiver.accepted.set(r.id, (receiver.accepted.get(r.id) ?? 0) + 1);
      if (receiver.mode === 'endless' || receiver.mode === 'trickle') return hostile(res, receiver.mode);
      answer(200, 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  assert.ok(port > 0);
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as TestReceiver;
}
