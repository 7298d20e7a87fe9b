// The syslog listeners: TLS (RFC 5425) and RELP over TLS with threatcol's cipher policy, plain TCP only when configured.
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { addressGroup } from '../../address-group.js';
import { parseAdminListen } from '../../config/admin-address.js';
import type { Config } from '../../config/schema.js';
import { type ClosedReason, type ConnectionSlots, listenerSlots } from '../../connection-slots.js';
import { HeldBudget } from '../../held-bytes.js';
import { LogThrottle } from '../../log-throttle.js';
import type { Sensor } from '../../store/registry.js';
import type { RecordLog, SensorStatsStore } from '../../store/store.js';
import { type TlsMaterial, tlsPolicy } from '../../tls/tls-material.js';
import { type ClientCertificate, clientCertificateOf } from './client-ca.js';
import { RefusalLog } from './refusal-log.js';
import { type RelpSession, serveRelpSession } from './relp-session.js';
import { type SyslogConnection, serveSyslogConnection } from './syslog-connection.js';
import { createSyslogIntake, type SyslogIntake } from './syslog-intake.js';
import { SyslogSenders } from './syslog-senders.js';
import { type SyslogCounts, SyslogTally } from './syslog-tally.js';

export type SyslogTransport = 'tls' | 'tcp' | 'relp';

export interface SyslogListenerDeps {
  config: Config;
  tls: TlsMaterial;
  recordLog: RecordLog;
  stats: SensorStatsStore;
  logger: Logger;
  now: () => number;
  /** Where to count (default: a tally of its own); a `serve --workers` worker's is drained to the primary. */
  tally?: SyslogTally;
  /**
   * The connection slots its sockets take (connection-slots.ts): the daemon's one table, shared with the HTTPS
   * listener (and under `serve --workers` told to the primary); absent, a table of its own.
   */
  slots?: ConnectionSlots;
  /** The bytes this process's syslog connections may hold in unfinished messages (default syslog.maxHeldBytes). */
  heldBytes?: number;
}

export interface SyslogListener {
  /** Starts the configured listeners; their addresses (null: not configured). */
  listen(): Promise<{ tls: AddressInfo | null; tcp: AddressInfo | null; relp: AddressInfo | null }>;
  /**
   * The registry changed: new connections are matched against these; connections of a sensor revoked or changed
   * are closed, and the others matched again (a narrower network added takes its senders' open connections).
   */
  updateSensors(sensors: readonly Sensor[]): void;
  setTls(material: TlsMaterial): void;
  readonly counts: SyslogCounts;
  /** Per sensor and format, with each sensor's unreadable messages (admin `/api/syslog-errors`, /metrics). */
  readonly tally: SyslogTally;
  close(): Promise<void>;
}

/** Whether `serve` listens for syslog at all (DESIGN 14: off unless configured). */
export function syslogConfigured(config: Config): boolean {
  return config.syslog.listen !== '' || config.syslog.tcpListen !== '' || config.syslog.relpListen !== '';
}

/** Connections idle this long are closed (a sender reconnects; syslog has nothing to answer). */
const IDLE_MS = 10 * 60_000;

export function createSyslogListener(deps: SyslogListenerDeps): SyslogListener {
  const { config, logger } = deps;
  const senders = new SyslogSenders();
  const tally = deps.tally ?? new SyslogTally();
  /** Each open connection's identity (matched again when the registry changes) and what stores its messages. */
  const open = new Map<Socket, { address: string; client: ClientCertificate | null; intake: SyslogIntake }>();
  /** The RELP sessions among them: closed with librelp's `serverclose` once their answers are out. */
  const relpSessions = new Map<Socket, RelpSession>();
  /** Each syslog connection (TLS, TCP), kept past its socket's close until its appends have settled. */
  const connections = new Map<Socket, SyslogConnection>();
  const refusals = new RefusalLog(logger, config.log.rejectIntervalMs, deps.now);
  /** A store refusing, a stall, a broken RELP session: every connection may say it at once, and says it once. */
  const throttledLog = new LogThrottle(logger, config.log.rejectIntervalMs);
  const servers: Server[] = [];

  /**
   * The connection policy every listener shares (connection-slots.ts): the daemon's three syslog listeners and
   * its HTTPS port count in one table (each apart, a host could hold four times the memory a cap is meant to
   * bound: one unfinished message per connection): server.maxConnections in all,
   * server.maxConnectionsPerAddress per address group (IPv6: /64). Every slot may be held by a connection not
   * yet identified, but a newcomer closes the oldest of those rather than being refused: a flood of silent
   * sockets churns, and a sensor that identifies itself within the next maxConnections arrivals stays (TLS,
   * RELP: its handshake; plain TCP: its first message).
   */
  const closedForCap = (socket: Socket, group: string, reason: ClosedReason): void => {
    tally.refuse('limit');
    refusals.warn(
      peerAddress(socket, group),
      reason === 'evicted'
        ? "too many connections on the sensors' listeners (server.maxConnections, server.maxConnectionsPerAddress): closed the oldest syslog connection not yet identified for a newcomer"
        : "too many connections on the sensors' listeners (server.maxConnections, server.maxConnectionsPerAddress): syslog connection closed",
    );
  };
  const slots = deps.slots ?? listenerSlots(config.server, { groupOf: addressGroup });

  /**
   * What the connections may hold in unfinished messages, together (held-bytes.ts): never less than two messages
   * of syslog.maxMessageBytes, so one sender's message always fits.
   */
  const askedHeld = deps.heldBytes ?? config.syslog.maxHeldBytes;
  const twoMessages = 2 * (config.syslog.maxMessageBytes + 1);
  if (askedHeld < twoMessages)
    logger.warn(
      { maxHeldBytes: askedHeld, using: twoMessages },
      "syslog.maxHeldBytes (a worker's share under --workers) holds less than two messages of syslog.maxMessageBytes: each process holds two",
    );
  const held = {
    budget: new HeldBudget(Math.max(askedHeld, twoMessages)),
    evicted: (socket: Socket): void => {
      tally.refuse('memory');
      refusals.warn(
        plainAddress(socket.remoteAddress ?? ''),
        'syslog connection closed: its unfinished message was the oldest when the syslog connections held syslog.maxHeldBytes',
      );
      socket.destroy();
    },
  };
  const admit = (socket: Socket): boolean => slots.admit(socket, closedForCap);

  function accept(socket: Socket, client: ClientCertificate | null, transport: SyslogTransport): void {
    const remoteAddr = plainAddress(socket.remoteAddress ?? '');
    const sensor = senders.match(remoteAddr, client);
    if (sensor === null) {
      tally.refuse('no_sensor');
      refusals.warn(remoteAddr, 'syslog connection matches no active sensor; closed before reading', {
        transport,
        clientCertificate: client?.fingerprint ?? 'none',
      });
      socket.destroy();
      return;
    }
    const intakeDeps = {
      config,
      recordLog: deps.recordLog,
      stats: deps.stats,
      logger,
      now: deps.now,
      tally,
      held,
      throttledLog,
    };
    const intake = createSyslogIntake(sensor, remoteAddr, intakeDeps);
    // Half-open once identified (as the HTTPS port once secure): a sender may end its side after its last
    // message and still get what is owed it (RELP: the answers). The connection ends this side once nothing is.
    socket.allowHalfOpen = true;
    open.set(socket, { address: remoteAddr, client, intake });
    socket.on('close', () => {
      open.delete(socket);
      relpSessions.delete(socket);
      void connections
        .get(socket)
        ?.settled()
        .then(() => connections.delete(socket));
    });
    socket.setTimeout(IDLE_MS, () => resetConnection(socket));
    // Over TLS the handshake with a sensor's identity is the proof; plain TCP's match by address costs a
    // connection nothing, so there the first message is.
    if (transport !== 'tcp') slots.prove(socket);
    if (transport === 'relp')
      relpSessions.set(socket, serveRelpSession(socket, intake, remoteAddr, intakeDeps));
    else
      connections.set(
        socket,
        serveSyslogConnection(socket, intake, remoteAddr, intakeDeps, () => slots.prove(socket)),
      );
  }

  let material = deps.tls;
  let cas: string[] = [];
  /**
   * The certificate, and as trusted CAs the union of the sensors' `--client-ca`s: OpenSSL verifies the chain
   * against them (and names them to the client); which CA stands for which sensor is checked per connection.
   */
  const secureContext = () => ({
    ...tlsPolicy(config.tls),
    cert: material.cert,
    key: material.key,
    ...(cas.length > 0 ? { ca: cas } : {}),
  });
  /** A TLS listener (syslog or RELP: the same certificate, policy and identity check). */
  function tlsListener(transport: 'tls' | 'relp') {
    const server = createTlsServer({
      ...secureContext(),
      // Pinned certificates (self-signed ones included) are not chained to a CA: the handshake takes any, and
      // who it is decides the sensor, or nothing.
      requestCert: true,
      rejectUnauthorized: false,
      handshakeTimeout: config.server.handshakeTimeoutMs,
    });
    server.on('connection', (socket: Socket) => {
      admit(socket);
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      accept(socket, clientCertificateOf(socket), transport);
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
      const next = senders.clientCas();
      if (next.join('') !== cas.join('')) {
        cas = next;
        tlsServer.setSecureContext(secureContext());
        relpServer.setSecureContext(secureContext());
      }
      for (const [socket, { address, client, intake }] of open) {
        const sensor = intake.sensor;
        // A sensor revoked or given another identity: its connections go, as a key revoked ends its requests.
        const now = senders.stillValid(sensor) ? senders.match(address, client) : null;
        if (now === null) {
          logger.info({ sensor: sensor.name }, 'syslog sensor revoked or changed; closing its connection');
          resetConnection(socket);
          continue;
        }
        // Matched as a new connection from there would be: the most specific network wins.
        if (now.name !== sensor.name) {
          logger.info(
            { sensor: now.name, was: sensor.name, remoteAddr: address },
            'syslog connection now belongs to another sensor (a more specific network)',
          );
        }
        intake.reassign(now);
      }
    },
    setTls(next) {
      material = next;
      tlsServer.setSecureContext(secureContext());
      relpServer.setSecureContext(secureContext());
    },
    async close() {
      // server.close waits for open connections: they are closed right after it stops accepting.
      const closing = servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
          }),
      );
      // A RELP sender is told (serverclose) after its answers; syslog over TCP has none to wait for, and is
      // reset so that the sender's next write fails rather than vanishes (resetConnection).
      const sessions = [...relpSessions.values()].map((session) => session.close());
      for (const socket of open.keys()) if (!relpSessions.has(socket)) resetConnection(socket);
      // What the store refused is tried once more before it closes (the daemon closes it after this).
      const appends = [...connections.values()].map((connection) => connection.settle());
      // Connections still in their TLS handshake would hold server.close for up to server.handshakeTimeoutMs.
      slots.destroyUnproven();
      refusals.flush();
      await Promise.all([...closing, ...sessions, ...appends]);
      throttledLog.flush();
    },
  };
}

/**
 * Closes a syslog connection (TLS or plain TCP) with a TCP reset rather than a FIN. Syslog has no answers, so a
 * sender learns that the collector went only from its socket: after a FIN its next write still succeeds (into a
 * connection the collector no longer reads, which answers it with a reset: that message is lost), unless it
 * checks for the FIN first. rsyslog's omfwd does check (a peeking recv before each send), but over TLS the check
 * sees the TLS 1.3 session tickets it never read, still waiting in its socket, and writes anyway. After a reset
 * the next write fails, and a sender that retries (rsyslog's action.resumeRetryCount) reconnects and sends it
 * again. What the collector had not read yet is dropped either way.
 */
function resetConnection(socket: Socket): void {
  // A TLS socket's TCP socket is node:tls's `_parent`; only a TCP handle can be reset.
  const tcp = (socket as { _parent?: Socket | null })._parent ?? socket;
  try {
    tcp.resetAndDestroy();
  } catch {
    // Already closed, or not over TCP.
  }
  socket.destroy();
}

function plainAddress(addr: string): string {
  return addr.startsWith('::ffff:') && addr.includes('.') ? addr.slice(7) : addr;
}

/** The socket's address for the log; a socket reset by its client has lost it, and its group stands in. */
function peerAddress(socket: Socket, group: string): string {
  return socket.remoteAddress === undefined ? group : plainAddress(socket.remoteAddress);
}
