// The syslog listeners: TLS (RFC 5425) with threatcol's cipher policy, and plain TCP only when configured.
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { parseAdminListen } from '../../config/admin-address.js';
import type { Config } from '../../config/schema.js';
import type { Sensor } from '../../store/registry.js';
import type { RecordLog } from '../../store/store.js';
import { type TlsMaterial, tlsPolicy } from '../../tls/tls-material.js';
import { type SyslogCounts, serveSyslogConnection } from './syslog-connection.js';
import { SyslogSenders } from './syslog-senders.js';

export interface SyslogListenerDeps {
  config: Config;
  tls: TlsMaterial;
  recordLog: RecordLog;
  logger: Logger;
  now: () => number;
}

export interface SyslogListener {
  /** Starts the configured listeners; their addresses (null: not configured). */
  listen(): Promise<{ tls: AddressInfo | null; tcp: AddressInfo | null }>;
  /** The registry changed: new connections are matched against these; connections of a sensor revoked or changed are closed. */
  updateSensors(sensors: readonly Sensor[]): void;
  setTls(material: TlsMaterial): void;
  readonly counts: SyslogCounts & { refused: number };
  close(): Promise<void>;
}

/** A refused address is logged at most once per this interval. */
const REFUSAL_LOG_MS = 60_000;
/** Connections idle this long are closed (a sender reconnects; syslog has nothing to answer). */
const IDLE_MS = 10 * 60_000;
const HANDSHAKE_MS = 10_000;

export function createSyslogListener(deps: SyslogListenerDeps): SyslogListener {
  const { config, logger } = deps;
  const senders = new SyslogSenders();
  const counts = { threats: 0, other: 0, invalid: 0, oversize: 0, refused: 0 };
  const open = new Map<Socket, Sensor>();
  const refusalLogged = new Map<string, number>();
  const servers: Server[] = [];

  function accept(socket: Socket, fingerprint: string | null, transport: 'tls' | 'tcp'): void {
    const remoteAddr = plainAddress(socket.remoteAddress ?? '');
    const sensor = senders.match(remoteAddr, fingerprint);
    if (sensor === null) {
      counts.refused++;
      const last = refusalLogged.get(remoteAddr) ?? Number.NEGATIVE_INFINITY;
      if (deps.now() - last >= REFUSAL_LOG_MS) {
        if (refusalLogged.size > 10_000) refusalLogged.clear(); // a scan must not grow it without bound
        refusalLogged.set(remoteAddr, deps.now());
        logger.warn(
          { remoteAddr, transport, clientCertificate: fingerprint ?? 'none' },
          'syslog connection matches no active sensor; closed before reading',
        );
      }
      socket.destroy();
      return;
    }
    open.set(socket, sensor);
    socket.on('close', () => open.delete(socket));
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    serveSyslogConnection(socket, sensor, remoteAddr, {
      config,
      recordLog: deps.recordLog,
      logger,
      now: deps.now,
      counts,
    });
  }

  const tlsServer = createTlsServer({
    ...tlsPolicy(config.tls),
    cert: deps.tls.cert,
    key: deps.tls.key,
    // Client certificates are pinned by fingerprint (self-signed ones included), not chained to a CA.
    requestCert: true,
    rejectUnauthorized: false,
    handshakeTimeout: HANDSHAKE_MS,
  });
  tlsServer.on('secureConnection', (socket: TLSSocket) => {
    const cert = socket.getPeerX509Certificate();
    accept(socket, cert?.fingerprint256 ?? null, 'tls');
  });
  tlsServer.on('tlsClientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    logger.debug(
      { remoteAddr: socket.remoteAddress, err: error.code ?? error.message },
      'syslog TLS handshake failed',
    );
  });
  const tcpServer = createTcpServer((socket) => accept(socket, null, 'tcp'));

  async function start(server: Server, text: string): Promise<AddressInfo | null> {
    const address = parseAdminListen(text);
    if (address === null) return null;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port, address.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    servers.push(server);
    return server.address() as AddressInfo;
  }

  return {
    counts,
    async listen() {
      const tls = await start(tlsServer, config.syslog.listen);
      const tcp = await start(tcpServer, config.syslog.tcpListen);
      if (tcp) {
        logger.warn(
          { port: tcp.port },
          'syslog over plain TCP is on (syslog.tcpListen): messages travel unencrypted and senders are known only by address',
        );
      }
      return { tls, tcp };
    },
    updateSensors(sensors) {
      senders.update(sensors);
      for (const [socket, sensor] of open) {
        if (!senders.stillValid(sensor)) {
          logger.info({ sensor: sensor.name }, 'syslog sensor revoked or changed; closing its connection');
          socket.destroy();
        }
      }
    },
    setTls(material) {
      tlsServer.setSecureContext({ ...tlsPolicy(config.tls), cert: material.cert, key: material.key });
    },
    async close() {
      // server.close waits for open connections: they are closed right after it stops accepting.
      const closing = servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
          }),
      );
      for (const socket of open.keys()) socket.destroy();
      await Promise.all(closing);
    },
  };
}

function plainAddress(addr: string): string {
  return addr.startsWith('::ffff:') && addr.includes('.') ? addr.slice(7) : addr;
}
