// A loopback webhook receiver for the output tests: records what it was sent, checks the signature, and can
// be down (503), slow, or refuse batches holding a marked record (400), as a real endpoint would.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceiverMode = 'down' | 'up' | 'unauthorized';

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
