// A loopback HTTPS server with a fresh self-signed certificate, standing in for a receiver (Elasticsearch,
// Splunk HEC) that cannot run here: the test gives the handler that implements the receiver's protocol.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../src/config/schema.js';
import { loadTlsMaterial } from '../../src/tls/tls-material.js';
import { makeTempDir } from './temp-dir.js';

export interface HttpsReceiver {
  url: string;
  /** PEM of the server's certificate: the client's `ca`. */
  ca: string;
  close(): Promise<void>;
}

export type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

export async function startHttpsReceiver(
  t: { after(fn: () => unknown): void },
  handler: Handler,
): Promise<HttpsReceiver> {
  const tls = await loadTlsMaterial(
    { cert: null, key: null, selfSignedKeyType: 'ecdsa' } as Config['tls'],
    makeTempDir(t),
    null,
  );
  const server = createServer({ cert: tls.cert, key: tls.key }, (request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => handler(request, body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.after(close);
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, ca: tls.cert, close };
}

export function answerJson(response: ServerResponse, status: number, body: unknown, headers = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(text);
}
