// Security finding 7: TLS session-ticket keys are rotated on a schedule (tls.ticketKeyRotationHours), and
// resumption keeps working with tickets issued under the current key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from 'node:tls';
import { startTestServer } from '../helpers/in-process-server.js';

interface Handshake {
  keyName: string;
  session: Buffer;
  reused: boolean;
}

/** One TLS 1.2 handshake (optionally resuming `session`): the ticket's key name and the session to reuse. */
async function handshake(url: string, session?: Buffer): Promise<Handshake> {
  const { hostname, port } = new URL(url);
  const socket = connect({
    host: hostname,
    port: Number(port),
    rejectUnauthorized: false,
    maxVersion: 'TLSv1.2',
    ...(session ? { session } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  const ticket = socket.getTLSTicket();
  const current = socket.getSession();
  const reused = socket.isSessionReused();
  socket.destroy();
  assert.ok(ticket && current, 'the server issued a session ticket');
  // RFC 5077: a ticket starts with the 16-byte name of the key that encrypted it.
  return { keyName: ticket.subarray(0, 16).toString('hex'), session: current, reused };
}

test('finding 7: session-ticket keys rotate on schedule; resumption works with current tickets', async (t) => {
  const s = await startTestServer(t, { overrides: { 'tls.ticketKeyRotationHours': 0.001 } }); // 3.6 s
  const first = await handshake(s.url);
  assert.equal((await handshake(s.url, first.session)).reused, true, 'resumed before the rotation');

  let latest = first;
  const started = Date.now();
  while (latest.keyName === first.keyName && Date.now() - started < 15_000) {
    await new Promise((r) => setTimeout(r, 500));
    latest = await handshake(s.url);
  }
  t.diagnostic(`ticket key changed after ${Date.now() - started} ms (interval 3600 ms)`);
  assert.notEqual(latest.keyName, first.keyName, 'the ticket key was rotated');
  assert.equal((await handshake(s.url, latest.session)).reused, true, 'resumed with a ticket of the new key');
  // Node keeps one ticket key: a ticket of the old key gets a full handshake, not an error.
  const old = await handshake(s.url, first.session);
  assert.equal(old.reused, false);
});
