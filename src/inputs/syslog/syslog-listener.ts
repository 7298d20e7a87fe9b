// The syslog listeners: TLS (RFC 5425) and RELP over TLS with threatcol's cipher policy, plain TCP only when configured.
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { parseAdminListen } from '../../config/admin-address.js';
import type { Config } from '../../config/schema.js';
import type { Sensor } from '../../store/registry.js';
import type { RecordLog, SensorStatsStore } from '../../store/store.js';
import { type TlsMaterial, tlsPolicy } from '../../tls/tls-material.js';
import { serveRelpSession } from './relp-session.js';
import { serveSyslogConnection } from './syslog-connection.js';
import { SyslogSenders } from './syslog-senders.js';
import { type SyslogCounts, SyslogTally } from './syslog-tally.js';

export interface SyslogListenerDeps {
  config: Config;
  tls: TlsMaterial;
  recordLog: RecordLog;
  stats: SensorStatsStore;
  logger: Logger;
  now: () => number;
}

export interface SyslogListener {
  /** Starts the configured listeners; their addresses (null: not configured). */
  listen(): Promise<{ tls: AddressInfo | null; tcp: AddressInfo | null; relp: AddressInfo | null }>;
  /** The registry changed: new connections are matched against these; connections of a sensor revoked or changed are closed. */
  updateSensors(sensors: readonly Sensor[]): void;
  setTls(material: TlsMaterial): void;
  readonly counts: SyslogCounts;
  /** Per sensor and format, with each sensor's unreadable messages (admin `/api/syslog-errors`, /metrics). */
  readonly tally: SyslogTally;
  close(): Promise<void>;
}

/** A refused address is logged at most once per this interval. */
const REFUSAL_LOG_MS = 60_000;
/** Connections idle this long are closed (a sender reconnects; syslog has nothing to answer). */
const IDLE_MS = 10 * 60_000;

export function createSyslogListener(deps: SyslogListenerDeps): SyslogListener {
  const { config, logger } = deps;
  const senders = new SyslogSenders();
  const tally = new SyslogTally();
  const open = new Map<Socket, Sensor>();
  const refusalLogged = new Map<string, number>();
  const servers: Server[] = [];
  const perAddress = new Map<string, number>();
  let connections = 0;

  /**
   * The HTTPS port's caps (server.maxConnections, server.maxConnectionsPerAddress), counted apart for syslog
   * and per exact address, before any TLS work: a flood of connections is closed as it arrives.
   */
  function admit(socket: Socket): boolean {
    const addr = plainAddress(socket.remoteAddress ?? '');
    const mine = perAddress.get(addr) ?? 0;
    if (connections >= config.server.maxConnections || mine >= config.server.maxConnectionsPerAddress) {
      tally.refuse('limit');
      logRefusal(
        addr,
        'too many syslog connections (server.maxConnections, server.maxConnectionsPerAddress)',
      );
      socket.destroy();
      return false;
    }
    connections++;
    perAddress.set(addr, mine + 1);
    socket.once('close', () => {
      connections--;
      const left = (perAddress.get(addr) ?? 1) - 1;
      if (left > 0) perAddress.set(addr, left);
      else perAddress.delete(addr);
    });
    return true;
  }

  /** Logs why `addr` was refused, at most once per address and interval. */
  function logRefusal(addr: string, why: string, details: Record<string, unknown> = {}): void {
    const last = refusalLogged.get(addr) ?? Number.NEGATIVE_INFINITY;
    if (deps.now() - last < REFUSAL_LOG_MS) return;
    if (refusalLogged.size > 10_000) refusalLogged.clear(); // a scan must not grow it without bound
    refusalLogged.set(addr, deps.now());
    logger.warn({ remoteAddr: addr, ...details }, why);
  }

  function accept(socket: Socket, fingerprint: string | null, transport: 'tls' | 'tcp' | 'relp'): void {
    const remoteAddr = plainAddress(socket.remoteAddress ?? '');
    const sensor = senders.match(remoteAddr, fingerprint);
    if (sensor === null) {
      tally.refuse('no_sensor');
      logRefusal(remoteAddr, 'syslog connection matches no active sensor; closed before reading', {
        transport,
        clientCertificate: fingerprint ?? 'none',
      });
      socket.destroy();
      return;
    }
    open.set(socket, sensor);
    socket.on('close', () => open.delete(socket));
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    const serve = transport === 'relp' ? serveRelpSession : serveSyslogConnection;
    serve(socket, sensor, remoteAddr, {
      config,
      recordLog: deps.recordLog,
      stats: deps.stats,
      logger,
      now: deps.now,
      tally,
    });
  }

  /** A TLS listener (syslog or RELP: the same certificate, policy and identity check). */
  function tlsListener(transport: 'tls' | 'relp') {
    const server = createTlsServer({
      ...tlsPolicy(config.tls),
      cert: deps.tls.cert,
      key: deps.tls.key,
      // Client certificates are pinned by fingerprint (self-signed ones included), not chained to a CA.
      requestCert: true,
      rejectUnauthorized: false,
      handshakeTimeout: config.server.handshakeTimeoutMs,
    });
    server.on('connection', (socket: Socket) => {
      admit(socket);
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      const cert = socket.getPeerX509Certificate();
      accept(socket, cert?.fingerprint256 ?? null, transport);
    });
    server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: Socket) => {
      logger.debug(
        { remoteAddr: socket.remoteAddress, err: error.code ?? error.message, transport },
        'syslog TLS handshake failed',
      );
    });
    return server;
  }
  const tlsServer = tlsListener('tls');
  const relpServer = tlsListener('relp');
  const tcpServer = createTcpServer((socket) => {
    if (admit(socket)) accept(socket, null, 'tcp');
  });

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
    counts: tally.totals,
    tally,
    async listen() {
      const tls = await start(tlsServer, config.syslog.listen);
      const tcp = await start(tcpServer, config.syslog.tcpListen);
      const relp = await start(relpServer, config.syslog.relpListen);
      if (tcp) {
        logger.warn(
          { port: tcp.port },
          'syslog over plain TCP is on (syslog.tcpListen): messages travel unencrypted and senders are known only by address',
        );
      }
      return { tls, tcp, relp };
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
      const context = { ...tlsPolicy(config.tls), cert: material.cert, key: material.key };
      tlsServer.setSecureContext(context);
      relpServer.setSecureContext(context);
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
