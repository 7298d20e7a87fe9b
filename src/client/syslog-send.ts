// Sends syslog messages octet-counted (RFC 6587 3.4.1, as RFC 5425 requires over TLS) over TLS, with a client
// certificate when given, or plain TCP, on `concurrency` connections, honouring TCP backpressure; a connection
// the collector closes unread (it matched no sensor) is reported, not counted as sent.
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
  /** The local address to send from (`--source`): a sensor known by its network sees this one. */
  localAddress?: string;
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

/**
 * The collector closed (or reset) a connection before this client ended it: it takes no message from a
 * connection that matches no sensor, and says nothing else (syslog has no answer).
 */
export class SyslogRefusedError extends Error {
  readonly code = 'SYSLOG_REFUSED';
}

/**
 * How long to wait, after the last message, for the collector to close a connection it refuses: 20 times the
 * connection's set-up time (it decides as the connection is set up), at least 0.5 s and at most 5 s.
 */
export function refusalWaitMs(setupMs: number): number {
  return Math.min(5000, Math.max(500, Math.ceil(setupMs * 20)));
}

/** A connection to the collector: plain TCP, or TLS checked as `to.tls.trust` says (with a client certificate). */
export async function openSyslogSocket(to: SyslogDestination): Promise<Socket> {
  const local = to.localAddress === undefined ? {} : { localAddress: to.localAddress };
  if (to.tls === null) {
    const socket = connectTcp({ host: to.host, port: to.port, ...local });
    await once(socket, 'connect');
    return socket;
  }
  const { trust, cert, key } = to.tls;
  const verify = trust.kind === 'system' || trust.kind === 'ca';
  // tls.connect takes no local address: TLS over a TCP socket bound to it.
  const tcp =
    to.localAddress === undefined ? undefined : connectTcp({ host: to.host, port: to.port, ...local });
  const socket: TLSSocket = connectTls({
    ...(tcp === undefined ? {} : { socket: tcp }),
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

/**
 * Writes `count` messages from `next(i)` spread over the connections, then closes them and waits until closed.
 * `connected` sees each connection before anything is written to it (and may throw to refuse it). Rejects with
 * SyslogRefusedError when the collector closes a connection first: it has taken nothing from it.
 */
export async function sendSyslog(
  to: SyslogDestination,
  count: number,
  concurrency: number,
  next: (i: number) => string,
  connected?: (socket: Socket) => void,
): Promise<SyslogSendSummary> {
  const started = process.hrtime.bigint();
  const sockets = await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, () => openSyslogSocket(to)),
  );
  const setupMs = Number(process.hrtime.bigint() - started) / 1e6;
  // The collector's close or reset while this client still sends: it refused the connection.
  const gone = sockets.map((socket) => {
    let ended = false;
    const closedFirst = new Promise<string>((resolve) => {
      socket.once('end', () => resolve(ended ? '' : 'closed'));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      socket.once('close', () => resolve(ended ? '' : 'closed'));
    });
    return { socket, closedFirst, end: () => (ended = true) };
  });
  for (const socket of sockets) {
    // Nothing is expected back; reading lets the collector's close arrive.
    socket.resume();
    if (connected) {
      try {
        connected(socket);
      } catch (error) {
        for (const s of sockets) s.destroy();
        throw error;
      }
    }
  }
  let sent = 0;
  let bytes = 0;
  // Waited on every connection at once: not part of the sending time reported.
  const waitMs = refusalWaitMs(setupMs);
  const refused = (why: string) =>
    new SyslogRefusedError(
      `the collector closed the connection without taking the messages (${why === 'closed' ? 'closed' : `reset: ${why}`})`,
    );
  await Promise.all(
    gone.map(async ({ socket, closedFirst, end }) => {
      const wrote = async (frame: Buffer) => {
        if (socket.write(frame)) return;
        const why = await Promise.race([once(socket, 'drain').then(() => null), closedFirst]);
        if (why !== null) throw refused(why);
      };
      while (sent < count) {
        const message = Buffer.from(next(sent++), 'utf8');
        const frame = Buffer.concat([Buffer.from(`${message.length} `), message]);
        bytes += frame.length;
        await wrote(frame);
      }
      // The collector decides as the connection is set up: a refusal arrives within a few set-up times.
      const waited = new Promise<null>((resolve) => setTimeout(resolve, waitMs, null).unref());
      const why = await Promise.race([closedFirst, waited]);
      if (why !== null) throw refused(why);
      end();
      socket.end();
      // A reset now (messages arriving at a closed connection) is a refusal too; a plain close is the answer.
      const after = await closedFirst;
      if (after !== '' && after !== 'closed') throw refused(after);
      if (!socket.closed) await once(socket, 'close');
    }),
  ).catch((error: unknown) => {
    for (const socket of sockets) socket.destroy();
    throw error;
  });
  const seconds = Math.max(0, Number(process.hrtime.bigint() - started) / 1e9 - waitMs / 1000);
  return { messages: sent, bytes, connections: sockets.length, seconds };
}
