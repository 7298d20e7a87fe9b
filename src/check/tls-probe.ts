// Who holds a port: a TLS handshake only (no HTTP request, so the daemon logs nothing) and the certificate seen.
import { connect, type TLSSocket } from 'node:tls';
import { connectHost } from './network-checks.js';

/** The SHA-256 fingerprint of the certificate served on host:port, or null (nothing, or not TLS). */
export function servedFingerprint(host: string, port: number, timeoutMs = 3000): Promise<string | null> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: string | null, socket?: TLSSocket) => {
      if (done) return;
      done = true;
      socket?.end();
      resolve(value);
    };
    const socket = connect({
      host: connectHost(host),
      port,
      // Only "whose certificate is this": compared by the caller, never trusted.
      rejectUnauthorized: false,
      servername: 'localhost',
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () => finish(socket.getPeerCertificate()?.fingerprint256 ?? null, socket));
    socket.once('timeout', () => {
      finish(null);
      socket.destroy();
    });
    socket.once('error', () => finish(null));
  });
}
