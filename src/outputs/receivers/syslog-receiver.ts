// The `syslog` receiver: RFC 5424 messages over TLS (RFC 5425) or plain TCP, octet-counted, body JSON or CEF.
//
// What "acknowledged" means here, honestly: syslog over TCP has no application acknowledgement. A batch counts
// as delivered once every byte of it was handed to the kernel (the write callbacks fired) on a connection that
// had reported no error, no close and no end from the peer. What can still be lost when the receiver dies or
// resets the connection: the bytes in this host's send buffer and the receiver's receive buffer and queue at
// that moment (typically up to a few hundred kilobytes), with no error reported for them. A peer that closes
// its side (rsyslog stopping) is noticed before the next batch, which then goes over a new connection.
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { hostname as osHostname } from 'node:os';
import { connect as connectTls } from 'node:tls';
import type { Logger } from '../../log.js';
import { systemCas } from '../../system-cas.js';
import { cefMessage } from './cef-message.js';
import {
  DELIVERED,
  type DeliveryReport,
  type OutgoingRecord,
  type Receiver,
  TransientDeliveryError,
} from './receiver.js';
import { frameOctetCounted, framePieces, type SyslogFacility, syslogMessage } from './syslog-message.js';

export interface SyslogOptions {
  host: string;
  /** null: 6514 for TLS (RFC 5425), 514 for TCP. */
  port: number | null;
  transport: 'tls' | 'tcp';
  format: 'json' | 'cef';
  facility: SyslogFacility;
  /** PEM text of the CA to verify the receiver with; null: the system CAs (Node's and the distribution's). */
  ca: string | null;
  /** HOSTNAME of the messages; null: this host's name. */
  hostname: string | null;
  sdId: string;
  connectTimeoutMs: number;
  /** A batch not taken by the kernel within this (the receiver stalls) fails, and the connection is dropped. */
  writeTimeoutMs: number;
}

export interface SyslogDeps {
  logger: Logger;
  /** Goes into the CEF header's version field. */
  productVersion?: string;
}

export function createSyslogReceiver(options: SyslogOptions, deps: SyslogDeps): Receiver {
  const port = options.port ?? (options.transport === 'tls' ? 6514 : 514);
  const header = {
    facility: options.facility,
    hostname: options.hostname ?? osHostname(),
    appName: 'threatcol',
    sdId: options.sdId,
  };
  const productVersion = deps.productVersion ?? '1';
  let socket: Socket | null = null;
  // Set when the connection can no longer carry a batch (error, close, the peer's end): the next batch reconnects.
  let broken = false;

  const drop = () => {
    socket?.destroy();
    socket = null;
  };

  const open = (signal: AbortSignal) =>
    new Promise<Socket>((resolve, reject) => {
      const onConnected = () => {
        cleanup();
        resolve(next);
      };
      const next =
        options.transport === 'tls'
          ? connectTls(
              {
                host: options.host,
                port,
                ca: options.ca ?? systemCas(),
                // SNI carries names only; an address is checked against the certificate's IP entries.
                ...(isIP(options.host) ? {} : { servername: options.host }),
              },
              onConnected,
            )
          : connectTcp({ host: options.host, port }, onConnected);
      const fail = (error: Error) => {
        cleanup();
        // A TLS socket can report a second error while it is torn down: it must not become an uncaught one.
        next.on('error', () => {});
        next.destroy();
        reject(
          signal.aborted
            ? signal.reason
            : new TransientDeliveryError(`syslog ${options.host}:${port}: ${error.message}`),
        );
      };
      const onError = (error: Error) => fail(error);
      const onAbort = () => fail(new Error('aborted'));
      const timer = setTimeout(
        () => fail(new Error(`no connection within ${options.connectTimeoutMs} ms`)),
        options.connectTimeoutMs,
      );
      const cleanup = () => {
        clearTimeout(timer);
        next.off('error', onError);
        signal.removeEventListener('abort', onAbort);
      };
      next.once('error', onError);
      signal.addEventListener('abort', onAbort, { once: true });
    });

  const connected = async (signal: AbortSignal): Promise<Socket> => {
    if (socket !== null && !broken) return socket;
    drop();
    const next = await open(signal);
    broken = false;
    next.setNoDelay(true);
    next.setKeepAlive(true, 60_000);
    // A syslog receiver sends nothing; reading keeps the end of its side (a FIN) visible to us.
    next.on('data', () => {});
    const lost = (why: string) => {
      if (socket !== next) return;
      if (!broken)
        deps.logger.warn({ receiver: 'syslog', host: options.host, port }, `connection lost: ${why}`);
      broken = true;
    };
    next.on('end', () => lost('the receiver closed it'));
    next.on('close', () => lost('closed'));
    next.on('error', (error) => lost(error.message));
    socket = next;
    return next;
  };

  const write = (target: Socket, data: Buffer, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const fail = (why: string) => {
        cleanup();
        // A partial frame may be on the wire: the connection cannot carry another message.
        broken = true;
        drop();
        reject(
          signal.aborted
            ? signal.reason
            : new TransientDeliveryError(`syslog ${options.host}:${port}: ${why}`),
        );
      };
      const onClose = () => fail('the connection closed during the batch');
      const onEnd = () => fail('the receiver closed the connection during the batch');
      const onError = (error: Error) => fail(error.message);
      const onAbort = () => fail('aborted');
      const timer = setTimeout(
        () => fail(`the batch was not taken within ${options.writeTimeoutMs} ms`),
        options.writeTimeoutMs,
      );
      const cleanup = () => {
        clearTimeout(timer);
        target.off('close', onClose);
        target.off('end', onEnd);
        target.off('error', onError);
        signal.removeEventListener('abort', onAbort);
      };
      target.once('close', onClose);
      target.once('end', onEnd);
      target.once('error', onError);
      signal.addEventListener('abort', onAbort, { once: true });
      target.write(data, (error) => {
        if (error) return fail(error.message);
        cleanup();
        if (broken)
          return reject(new TransientDeliveryError(`syslog ${options.host}:${port}: connection lost`));
        resolve();
      });
    });

  return {
    async send(batch: readonly OutgoingRecord[], signal: AbortSignal): Promise<DeliveryReport> {
      signal.throwIfAborted();
      if (batch.length === 0) return DELIVERED;
      const frames: Buffer[] = [];
      for (const entry of batch) {
        if (options.format === 'cef') {
          frames.push(
            frameOctetCounted(
              syslogMessage(header, entry, cefMessage(entry.record, entry.id, productVersion)),
            ),
          );
          continue;
        }
        const bytes = entry.bytes;
        if (bytes !== undefined) frames.push(...framePieces(syslogMessage(header, entry, ''), bytes));
        else frames.push(frameOctetCounted(syslogMessage(header, entry, entry.line)));
      }
      const target = await connected(signal);
      await write(target, Buffer.concat(frames), signal);
      return DELIVERED;
    },
    async close(): Promise<void> {
      const last = socket;
      socket = null;
      if (last === null || last.destroyed) return;
      await new Promise<void>((resolve) => {
        last.once('close', () => resolve());
        last.end();
        // A receiver that never closes its side must not hold the close.
        setTimeout(() => last.destroy(), 1000).unref();
      });
    },
  };
}
