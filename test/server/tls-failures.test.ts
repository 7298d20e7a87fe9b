// A firewall that cannot connect is diagnosable from the journal: each pre-HTTP failure is logged with the
// client address and a specific reason, counted per address in the summary; a plain hang-up is no rejection.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';

/** Resolves with the first log line matching, waiting up to 10 s (the server logs asynchronously to the client). */
async function logLine(server: TestServer, match: (l: Record<string, unknown>) => boolean) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const line = server.logs.find(match);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('no such log line');
}

const failure = (reason: string) => (l: Record<string, unknown>) => l.level === 40 && l.reason === reason;

function openssl(args: string[]): Promise<void> {
  return new Promise((resolve) => {
    const p = spawn('openssl', ['s_client', ...args], { stdio: ['pipe', 'ignore', 'ignore'] });
    p.on('error', () => resolve());
    p.stdin.end();
    p.on('exit', () => resolve());
  });
}

test('TLS and pre-HTTP failures name the client and the reason', async (t) => {
  const server = await startTestServer(t, { overrides: { 'server.handshakeTimeoutMs': 1000 } });
  const port = Number(new URL(server.url).port);
  const host = '127.0.0.1';

  // The firewall does not trust our certificate (a certificate profile with another CA).
  await openssl([
    '-connect',
    `${host}:${port}`,
    '-verify_return_error',
    '-CAfile',
    '/etc/ssl/certs/ca-certificates.crt',
  ]);
  const unknownCa = await logLine(server, failure('unknown_ca'));
  assert.equal(unknownCa.remoteAddr, host);
  assert.match(String(unknownCa.msg), /the client refused our certificate: unknown CA/);

  // It trusts the CA but the name does not match.
  const cert = join(server.dataDir, 'tls', 'cert.pem');
  await openssl([
    '-connect',
    `${host}:${port}`,
    '-verify_return_error',
    '-CAfile',
    cert,
    '-verify_hostname',
    'wrong.example',
  ]);
  await logLine(server, failure('bad_certificate'));

  // Plain HTTP to the HTTPS port.
  await new Promise<void>((resolve) => {
    const s = netConnect(port, host, () => s.write('POST /firewall HTTP/1.1\r\nHost: x\r\n\r\n'));
    s.on('close', () => resolve()).on('error', () => {});
  });
  const plain = await logLine(server, failure('plain_http'));
  assert.match(String(plain.msg), /plain HTTP sent to the HTTPS port/);

  // TLS 1.1 only, and a cipher the server does not offer.
  for (const options of [
    { minVersion: 'TLSv1' as const, maxVersion: 'TLSv1.1' as const, ciphers: 'DEFAULT:@SECLEVEL=0' },
    { maxVersion: 'TLSv1.2' as const, ciphers: 'AES128-SHA' },
  ]) {
    await new Promise<void>((resolve) => {
      const s = tlsConnect({ port, host, rejectUnauthorized: false, ...options });
      s.on('error', () => resolve()).on('close', () => resolve());
    });
  }
  await logLine(server, failure('protocol_version'));
  await logLine(server, failure('cipher_mismatch'));

  // Connects and never says hello.
  const silent = netConnect(port, host);
  silent.on('error', () => {});
  const timeout = await logLine(server, failure('handshake_timeout'));
  assert.equal(timeout.remoteAddr, host);
  silent.destroy();

  // A client that hangs up mid-handshake is not a rejection and no warning.
  await new Promise<void>((resolve) => {
    const s = netConnect(port, host, () => {
      s.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x50, 0x01]));
      setTimeout(() => {
        s.resetAndDestroy();
        resolve();
      }, 50);
    });
    s.on('error', () => {});
  });
  await logLine(server, (l) => l.msg === 'client disconnected during the TLS handshake');
  // A Node client that refuses our certificate closes without an alert once its handshake is done; the server
  // (half-open for HTTP) sees it only at the handshake timeout: a disconnect at debug, not a timeout at warn.
  const timeouts = () => server.logs.filter(failure('handshake_timeout')).length;
  const disconnects = () =>
    server.logs.filter((l) => l.msg === 'client disconnected during the TLS handshake').length;
  const [timeoutsBefore, disconnectsBefore] = [timeouts(), disconnects()];
  await new Promise<void>((resolve) => {
    const s = tlsConnect({
      port,
      host,
      servername: 'localhost',
      ca: readFileSync('/etc/ssl/certs/ca-certificates.crt'),
    });
    s.on('error', () => resolve());
  });
  await logLine(server, () => disconnects() > disconnectsBefore);
  assert.equal(timeouts(), timeoutsBefore, 'a client that closed is no handshake timeout');
  // A TLS client that sends half a request and hangs up.
  await new Promise<void>((resolve) => {
    const s = tlsConnect({ port, host, rejectUnauthorized: false }, () => {
      s.write('POST /generic HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab');
      setTimeout(() => {
        s.destroy();
        resolve();
      }, 100);
    });
    s.on('error', () => {});
  });
  await logLine(server, (l) => l.msg === 'client disconnected');

  for (const line of server.logs) {
    assert.notEqual(line.code, 'BAD_REQUEST', `no BAD_REQUEST rejection: ${JSON.stringify(line)}`);
    if (line.level === 40) assert.notEqual(line.remoteAddr, '', JSON.stringify(line));
  }
  await server.stop();
  const summary = server.logs.find((l) => l.msg === 'summary');
  const failed = (summary?.failedConnections as Record<string, Record<string, number>>)?.[host];
  assert.ok(failed, JSON.stringify(summary));
  for (const reason of [
    'unknown_ca',
    'bad_certificate',
    'plain_http',
    'protocol_version',
    'cipher_mismatch',
    'handshake_timeout',
  ]) {
    assert.ok((failed[reason] ?? 0) >= 1, `${reason} counted: ${JSON.stringify(failed)}`);
  }
  assert.equal(failed.client_disconnected, undefined);
  assert.ok(readFileSync(cert, 'utf8').includes('BEGIN CERTIFICATE'));
});
