// Security finding 8: absolute-form targets, Expect: 100-continue after the checks, the ECDSA certificate's
// key usage, and a revoked sensor logged by name. Raw TLS sockets where undici would normalise the request.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import { post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';

/** Opens a TLS connection to the test server (self-signed: not verified). */
async function open(url: string): Promise<TLSSocket> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** Collects what the server sends until `done(text)` says enough, or the socket closes. */
function readUntil(socket: TLSSocket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const finish = () => {
      socket.off('data', onData);
      resolve(text);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (done(text)) finish();
    };
    socket.on('data', onData);
    socket.once('close', finish);
  });
}

const complete = (text: string) => {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1 || text.startsWith('HTTP/1.1 100')) return false;
  const length = /content-length: (\d+)/i.exec(text.slice(0, end));
  return length !== null && text.length >= end + 4 + Number(length[1]);
};

test('finding 8: absolute-form targets are routed; 100-continue only after the checks; ECDSA key usage; revoked sensor logged by name', async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('fw');
  const revokedKey = await s.addSensor('gone');
  await s.revokeSensor('gone');
  const body = JSON.stringify(genericRecord());
  const head = (target: string, k: string, extra = '') =>
    `POST ${target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-AUTH_KEY: ${k}\r\n` +
    `X-SENSOR_NAME: fw\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`;

  // RFC 9112 3.2.2: a server must accept the absolute form.
  const port = new URL(s.url).port;
  const a = await open(s.url);
  a.write(head(`https://localhost:${port}/generic`, key) + body);
  const absolute = await readUntil(a, complete);
  a.destroy();
  assert.match(absolute, /^HTTP\/1\.1 200 /, absolute);

  // A wrong key: refused at once, without a 100 Continue inviting the body.
  const w = await open(s.url);
  w.write(head('/generic', 'tck_wrong', 'Expect: 100-continue\r\n'));
  const wrong = await readUntil(w, complete);
  w.destroy();
  assert.match(wrong, /^HTTP\/1\.1 401 /, wrong);
  assert.ok(!wrong.includes('100 Continue'), wrong);

  // The right key: 100 Continue first, then the body is read and stored.
  const r = await open(s.url);
  r.write(head('/generic', key, 'Expect: 100-continue\r\n'));
  const interim = await readUntil(r, (text) => text.includes('\r\n\r\n'));
  assert.match(interim, /^HTTP\/1\.1 100 Continue/, interim);
  r.write(body);
  const final = await readUntil(r, complete);
  r.destroy();
  assert.match(final, /HTTP\/1\.1 200 /, final);

  // RFC 5480: an ECDSA certificate's key usage is digitalSignature only.
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  const cert = new x509.X509Certificate(readFileSync(join(s.dataDir, 'tls', 'cert.pem'), 'utf8'));
  const usage = cert.getExtension(x509.KeyUsagesExtension);
  assert.equal(usage?.usages, x509.KeyUsageFlags.digitalSignature);

  // A revoked sensor's 403 is logged (and counted) with its name.
  const revoked = await post(s.url, '/generic', genericRecord(), {
    agent: s.agent,
    sensor: 'gone',
    key: revokedKey,
  });
  assert.equal(revoked.status, 403);
  const line = s.logs.find((l) => l.code === 'SENSOR_REVOKED');
  assert.equal(line?.sensor, 'gone', JSON.stringify(line));
});
