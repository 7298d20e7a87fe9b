// The HTTPS listener: TLS policy, timeouts against slow clients, connection caps, routing to the two endpoints.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server, type ServerOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { addressGroup } from '../../address-group.js';
import type { Config } from '../../config/schema.js';
import { type ConnectionSlots, listenerSlots } from '../../connection-slots.js';
import { CATALOGUE, type ErrorCode, errorBody } from '../../errors.js';
import { classifyTlsFailure } from '../../tls/tls-failure.js';
import { type TlsMaterial, tlsPolicy } from '../../tls/tls-material.js';
import type { ActivityLog } from './activity-log.js';
import { firewallRoute } from './firewall-route.js';
import { genericRoute } from './generic-route.js';
import { InFlight } from './in-flight.js';
import { clientAddress, handleIngest, type IngestDeps, type RouteSpec } from './ingest.js';
import { sendError } from './respond.js';

const ROUTES: Record<string, RouteSpec> = { '/firewall': firewallRoute, '/generic': genericRoute };

export interface CollectorServerDeps extends IngestDeps {
  tls: TlsMaterial;
  logger: Logger;
  activity: ActivityLog;
  /**
   * `GET /feeds/NAME`: the blocklist feeds (src/decisions/, injected by the daemon, which this layer cannot
   * import); absent, those paths are 404 as any unknown path.
   */
  feeds?: (
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    authenticated: (socket: Socket) => void,
  ) => void;
  /**
   * The connection slots this listener's sockets take (connection-slots.ts): the daemon's one table, shared with
   * the syslog listeners (and under `serve --workers` told to the primary); absent, a table of its own.
   */
  slots?: ConnectionSlots;
}

export interface CollectorServer {
  readonly server: Server;
  /** Listens on the configured host/port, or on an inherited listening socket (systemd socket activation). */
  listen(handle?: { fd: number }): Promise<AddressInfo>;
  /** Swaps certificate and key for new connections; open connections keep theirs. */
  setTls(material: TlsMaterial): void;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes what is left. */
  close(graceMs: number): Promise<void>;
}

/** TLS policy, material and timeouts of the listener; the benchmark's reference server uses the same. */
export function httpsServerOptions(config: Config, tls: { cert: string; key: string }): ServerOptions {
  const cfg = config.server;
  return {
    ...tlsPolicy(config.tls),
    cert: tls.cert,
    key: tls.key,
    handshakeTimeout: cfg.handshakeTimeoutMs,
    headersTimeout: cfg.headersTimeoutMs,
    requestTimeout: cfg.requestTimeoutMs,
    keepAliveTimeout: cfg.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1000,
    maxHeaderSize: 16 * 1024,
    noDelay: true,
    // Not half-open during the TLS handshake: a client that closed then (a Node client refusing our certificate
    // sends no alert) is closed at once, giving its connection slot back, not at handshakeTimeoutMs. Once secure,
    // the socket is half-open (secureConnection below): a sender may shut its write side after the request
    // (half-close) and still read its answer.
    allowHalfOpen: false,
  };
}

export function createCollectorServer(deps: CollectorServerDeps): CollectorServer {
  const cfg = deps.config.server;
  let closing = false;
  const inFlight = new InFlight<ServerResponse>();
  /** Shutting down: answer the request, then end its connection instead of keeping it alive. */
  const endAfterResponse = (res: ServerResponse) => {
    if (!res.headersSent) res.shouldKeepAlive = false;
    res.once('finish', () => server.closeIdleConnections());
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    if (closing) endAfterResponse(res);
    else {
      const entry = inFlight.add(res);
      res.on('close', () => inFlight.delete(entry));
    }
    route(req, res, deps, authenticated);
  };
  // A sender whose key or password was found good proved itself: its connection is never closed for a
  // newcomer. Told by the route that checked it, never read off the answer's status: a 429 or a 503 given
  // before any check (a feed's failed-login limit, a registry not read yet) proves nothing.
  const authenticated = (socket: Socket) => slots.prove(socket);
  const server = createHttpsServer(httpsServerOptions(deps.config, deps.tls), onRequest);
  // `Expect: 100-continue`: the same pipeline, which sends 100 only once auth, media type and declared size
  // passed, so a sender with a wrong key never uploads its body (Node would otherwise answer 100 at once).
  server.on('checkContinue', onRequest);
  // Session-ticket keys live only in memory and are replaced on a schedule (security finding 7). Node holds
  // one ticket key at a time, so a ticket issued before a rotation falls back to a full handshake.
  const ticketRotation = setInterval(
    () => server.setTicketKeys(randomBytes(48)),
    deps.config.tls.ticketKeyRotationHours * 3_600_000,
  );
  ticketRotation.unref();
  // With the socket half-open once secure (below): the request is answered, then the connection ends (Node's
  // default aborts the request, yet its records were stored, so the sender's retry duplicated them). Node's
  // switch for this is an undocumented property of every http(s) server since 0.x;
  // test/server/half-close.test.ts fails should it ever go.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Inactivity on a socket (e.g. a client that never reads its response) ends it after this.
  server.timeout = cfg.keepAliveTimeoutMs + 5000;

  // The one connection policy (connection-slots.ts), not Node's `maxConnections`, which refuses a newcomer
  // where the policy closes the oldest connection that has not yet been answered past authentication.
  const slots = deps.slots ?? listenerSlots(cfg, { groupOf: addressGroup });
  deps.metrics?.sources({ connectionsOpen: () => slots.open });
  server.on('connection', (socket: Socket) => {
    connectedFrom.set(socket, socket.remoteAddress ?? '');
    slots.admit(socket);
  });

  /** Connections whose TLS handshake finished: only they can fail at the HTTP level. */
  const secured = new WeakSet<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    secured.add(socket);
    socket.allowHalfOpen = true;
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Before the handshake finished this is a TLS failure: tlsClientError below logs it.
    if (!secured.has(socket) || classifyTlsFailure(error) === 'client_disconnected') {
      if (secured.has(socket)) {
        deps.logger.debug({ remoteAddr: peerAddress(socket), err: error.code }, 'client disconnected');
      }
      socket.destroy();
      return;
    }
    const code: ErrorCode =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'HEADERS_TOO_LARGE'
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'REQUEST_TIMEOUT'
          : 'BAD_REQUEST';
    deps.activity.reject({
      code,
      status: CATALOGUE[code].status,
      method: '',
      path: '',
      sensor: null,
      remoteAddr: peerAddress(socket),
      message: error.code ?? error.message,
    });
    // Always destroy: a handler that only ends the socket would switch off the handshake and request timeouts.
    if (socket.writable) {
      const body = errorBody(code);
      deps.metrics?.requestDone('other', code, deps.metrics.now());
      socket.end(
        `HTTP/1.1 ${CATALOGUE[code].status} ${code}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      setTimeout(() => socket.destroy(), 1000).unref();
    } else {
      socket.destroy();
    }
  });

  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // A client that closed during the handshake (one that refused our certificate: Node's client sends no
    // alert) is a reset here, at once (the socket is not half-open until secure): it disconnected.
    const reason = classifyTlsFailure(error);
    deps.metrics?.tlsHandshakeFailed(reason);
    const remoteAddr = peerAddress(socket);
    if (reason === 'client_disconnected') {
      deps.logger.debug({ remoteAddr, err: error.code }, 'client disconnected during the TLS handshake');
      return;
    }
    deps.activity.tlsFailure(remoteAddr, reason, error.code ?? error.message);
  });

  return {
    server,
    listen(handle) {
      return new Promise((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        server.once('error', onError);
        const done = () => {
          server.off('error', onError);
          resolve(server.address() as AddressInfo);
        };
        if (handle) server.listen(handle, done);
        else server.listen({ host: cfg.host, port: cfg.port, ipv6Only: false }, done);
      });
    },
    setTls(material) {
      server.setSecureContext({ ...tlsPolicy(deps.config.tls), cert: material.cert, key: material.key });
    },
    close(graceMs) {
      closing = true;
      clearInterval(ticketRotation);
      for (const res of inFlight.values()) endAfterResponse(res);
      inFlight.clear();
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}

function route(
  req: IncomingMessage,
  res: ServerResponse,
  deps: CollectorServerDeps,
  authenticated: (socket: Socket) => void,
): void {
  let url = req.url ?? '/';
  // Absolute form (`POST https://host/firewall HTTP/1.1`, RFC 9112 3.2.2): route by its path.
  if (url.charCodeAt(0) !== 0x2f) url = absoluteFormPath(url);
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (deps.feeds && path.startsWith('/feeds/')) {
    deps.feeds(req, res, path.slice('/feeds/'.length), authenticated);
    return;
  }
  const spec = ROUTES[path];
  if (spec === undefined || !Object.hasOwn(ROUTES, path)) {
    reject(req, res, deps, path, 'NOT_FOUND');
    return;
  }
  if (req.method !== 'POST') {
    reject(req, res, deps, path, 'METHOD_NOT_ALLOWED', { Allow: 'POST' });
    return;
  }
  void handleIngest(spec, req, res, path, deps, authenticated);
}

/** The path of an absolute-form target (`https://host:port/path?q` → `/path?q`); anything else as it is. */
function absoluteFormPath(url: string): string {
  const scheme = /^https?:\/\/[^/?#]*/i.exec(url);
  if (!scheme) return url;
  const rest = url.slice(scheme[0].length);
  return rest === '' || rest.charCodeAt(0) !== 0x2f ? `/${rest}` : rest;
}

function reject(
  req: IncomingMessage,
  res: ServerResponse,
  deps: CollectorServerDeps,
  path: string,
  code: ErrorCode,
  headers: Record<string, string> = {},
): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (req.headers['transfer-encoding'] !== undefined || declared > 64 * 1024) headers.Connection = 'close';
  deps.activity.reject({
    code,
    status: CATALOGUE[code].status,
    method: req.method ?? '',
    path: path.slice(0, 200),
    sensor: null,
    remoteAddr: clientAddress(req),
    message: CATALOGUE[code].message,
  });
  sendError(res, code, undefined, undefined, headers);
  deps.metrics?.requestDone('other', code, deps.metrics.now());
}

/**
 * The client's address, plain IPv4 for mapped addresses. A TLS socket reset by its client has lost its address;
 * the TCP socket under it (`_parent`, set by node:tls for server sockets) had it when it connected.
 */
const connectedFrom = new WeakMap<Socket, string>();

function peerAddress(socket: Socket): string {
  const parent = (socket as { _parent?: Socket | null })._parent;
  const addr =
    socket.remoteAddress ??
    connectedFrom.get(socket) ??
    (parent ? connectedFrom.get(parent) : undefined) ??
    '';
  return addr.startsWith('::ffff:') && addr.includes('.') ? addr.slice(7) : addr;
}
