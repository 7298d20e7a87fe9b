// Sends syslog messages octet-counted (RFC 6587 3.4.1, as RFC 5425 requires over TLS) over TLS, with a client
// certificate when given, or plain TCP, on `concurrency` connections, honouring TCP backpressure.
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type TLSSocket } from 'node:tls';
import { systemCas } from '../system-cas.js';
import type { Trust } from './connection.js';
import { normalizeFingerprint } from './fingerprint.js';

export interface SyslogDestination {
  host: string;
  port: number;
  /** null: plain TCP. */
  tls: { trust: Trust; cert?: string; key?: string } | null;
}

export interface SyslogSendSummary {
  messages: number;
  bytes: number;
  connections: number;
  seconds: number;
}

/** A connection refused by a pin reports this code (CONNECTION_FAILED names it). */
export class SyslogFingerprintError extends Error {
  readonly code = 'FINGERPRINT_MISMATCH';
}

/** A connection to the collector: plain TCP, or TLS checked as `to.tls.trust` says (with a client certificate). */
export async function openSyslogSocket(to: SyslogDestination): Promise<Socket> {
  if (to.tls === null) {
    const socket = connectTcp({ host: to.host, port: to.port });
    await once(socket, 'connect');
    return socket;
  }
  const { trust, cert, key } = to.tls;
  const verify = trust.kind === 'system' || trust.kind === 'ca';
  const socket: TLSSocket = connectTls({
    host: to.host,
    port: to.port,
    servername: /^[\d.:]+$/.test(to.host) ? undefined : to.host,
    ...(verify ? { ca: trust.kind === 'ca' ? trust.pem : systemCas() } : { rejectUnauthorized: false }),
    ...(cert !== undefined && key !== undefined ? { cert, key } : {}),
    minVersion: 'TLSv1.2',
  });
  await once(socket, 'secureConnect');
  if (trust.kind === 'fingerprint') {
    const seen = normalizeFingerprint(socket.getPeerCertificate().fingerprint256 ?? '');
    if (seen !== trust.sha256) {
      socket.destroy();
      throw new SyslogFingerprintError(
        `the collector's certificate is not the pinned one (${seen ?? 'none'})`,
      );
    }
  }
  return socket;
}

/** Writes `count` messages from `next(i)` spread over the connections, then closes them and waits until closed. */
export async function sendSyslog(
  to: SyslogDestination,
  count: number,
  concurrency: number,
  next: (i: number) => string,
): Promise<SyslogSendSummary> {
  const started = process.hrtime.bigint();
  const sockets = await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, () => openSyslogSocket(to)),
  );
  // Nothing is expected back; reading lets the collector's close arrive.
  for (const socket of sockets) socket.resume();
  let sent = 0;
  let bytes = 0;
  await Promise.all(
    sockets.map(async (socket) => {
      const closed = once(socket, 'close');
      while (sent < count) {
        const message = Buffer.from(next(sent++), 'utf8');
        const frame = Buffer.concat([Buffer.from(`${message.length} `), message]);
        bytes += frame.length;
        if (!socket.write(frame)) await once(socket, 'drain');
      }
      socket.end();
      await closed;
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { messages: sent, bytes, connections: sockets.length, seconds };
}
