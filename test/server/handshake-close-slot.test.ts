// A TLS client that closes during its handshake (a Node client refusing our certificate closes without an
// alert) gives its connection slot back at once, not at server.handshakeTimeoutMs: the listener is half-open for
// HTTP, so such a socket stayed open, counted against server.maxConnections, until the handshake timed out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { request } from 'undici';
import { trustingAgent } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { until } from '../helpers/until.js';

/** The cap of the listener (all from 127.0.0.1: the per-address cap is the same). */
const CAP = 4;
/** The handshake timeout: what a half-closed socket held its slot for. */
const HANDSHAKE_MS = 10_000;

/** A client that does not trust the collector's certificate: it closes during the handshake. */
function refusingClient(port: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const socket = tlsConnect({
      port,
      host: '127.0.0.1',
      servername: 'localhost',
      ca: readFileSync('/etc/ssl/certs/ca-certificates.crt'),
    });
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
  });
}

async function connectionsOpen(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.adminUrl}/metrics`)).text();
  return Number(/^threatcol_connections_open (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

test('clients that closed during the TLS handshake give their connection slots back at once', async (t) => {
  const server = await startTestServer(t, {
    overrides: {
      'server.maxConnections': CAP,
      'server.maxConnectionsPerAddress': CAP,
      'server.handshakeTimeoutMs': HANDSHAKE_MS,
    },
  });
  const port = Number(new URL(server.url).port);
  /** A trusted client's request on a new connection: how long until it is answered. */
  const served = async () => {
    const agent = trustingAgent(server.dataDir);
    try {
      const started = Date.now();
      // Any answer (404: no such route) means the connection was taken and read.
      const res = await request(`${server.url}/`, { dispatcher: agent });
      await res.body.dump();
      assert.equal(res.statusCode, 404);
      return Date.now() - started;
    } finally {
      await agent.close();
    }
  };
  // The reference, in this run: a request on an idle listener.
  const reference = await served();

  await Promise.all(Array.from({ length: CAP }, () => refusingClient(port)));
  const closed = Date.now();
  const freed = await until(
    async () => (await connectionsOpen(server)) === 0,
    HANDSHAKE_MS * 3,
    'the slots are given back',
    20,
  );
  // The cap full again of such clients: a newcomer is served as on an idle listener.
  await Promise.all(Array.from({ length: CAP }, () => refusingClient(port)));
  const newcomer = await served();
  t.diagnostic(
    `slots given back ${freed} ms after ${CAP} clients closed in their handshake; a request ${reference} ms on an idle listener, ${newcomer} ms after ${CAP} more`,
  );
  assert.ok(Date.now() - closed < HANDSHAKE_MS, 'all before the handshake timeout');
  assert.ok(freed < 1000 + reference * 10, `slots given back after ${freed} ms`);
  assert.ok(newcomer < 1000 + reference * 10, `the newcomer was served after ${newcomer} ms`);
  assert.ok(
    !server.logs.some((l) => l.level === 40 && l.reason === 'handshake_timeout'),
    'no handshake timeout logged',
  );
});
