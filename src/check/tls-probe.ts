// Who holds a port: a TLS handshake only (no HTTP request, so the daemon logs nothing) and the certificate seen.
import { connect, type TLSSocket } from 'node:tls';

/** The SHA-256 fingerprint of the certificate served on host:port, or null (nothing, or not TLS). */
export async function servedFingerprint(
  host: string,
  port: number,
  timeoutMs = 3000,
): Promise<string | null> {
  const probe = await probeTls(host, port, timeoutMs);
  return 'fingerprint' in probe ? probe.fingerprint : null;
}

/**
 * A TLS handshake with host:port, then a clean close: the certificate's fingerprint, or why it failed
 * (`ECONNREFUSED`, a timeout, not TLS). The daemon counts no request and logs nothing for it.
 */
export function probeTls(
  host: string,
  port: number,
  timeoutMs = 3000,
): Promise<{ fingerprint: string | null } | { error: string }> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value: { fingerprint: string | null } | { error: string }, socket?: TLSSocket) => {
      if (done) return;
      done = true;
      socket?.end();
      resolve(value);
    };
    const socket = connect({
      host,
      port,
      // Only "whose certificate is this": compared by the caller, never trusted.
      rejectUnauthorized: false,
      servername: 'localhost',
      timeout: timeoutMs,
    });
    socket.once('secureConnect', () =>
      finish({ fingerprint: socket.getPeerCertificate()?.fingerprint256 ?? null }, socket),
    );
    socket.once('timeout', () => {
      finish({ error: `no TLS handshake within ${timeoutMs} ms` });
      socket.destroy();
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish({ error: error.code === 'ECONNREFUSED' ? 'connection refused' : (error.code ?? error.message) }),
    );
  });
}
