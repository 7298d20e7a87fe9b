// The admin listener (DESIGN 11): plain HTTP for the people who run the box, never the sensors' routes.
// /healthz, /readyz, /metrics, and the read-only dashboard (static files from the package + JSON + SSE).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { AdminAddress } from '../config/admin-address.js';
import { errorBody } from '../errors.js';
import { nodeHttp } from '../node-http.js';
import { AdminConnections } from './admin-connections.js';
import { type BlocklistView, MAX_CHECKED } from './blocklist-panel.js';
import { type DashboardStore, feedFilter, sensorRows, serveFeed } from './dashboard-routes.js';
import { createFilteredHistograms, histogramFilter } from './filtered-histograms.js';
import type { LiveFeed } from './live-feed.js';
import { serveSearch } from './search-route.js';
import { serveSource } from './source-route.js';

const { createServer } = nodeHttp;

export interface AdminServerDeps {
  address: AdminAddress;
  token: string | null;
  logger: Logger;
  /** Why the collector cannot accept records now (empty: ready). */
  notReadyReasons(): Promise<string[]>;
  /** The Prometheus exposition (this process, or the primary aggregating its workers). */
  renderMetrics(): Promise<{ contentType: string; body: string }>;
  store: DashboardStore;
  feed: LiveFeed;
  defaultTimezone: string;
  /** `GET /api/outputs`: every output's status and position. */
  outputs(): Promise<unknown[]>;
  /** `GET /api/syslog-errors?sensor=NAME`: the sensor's syslog counters and unreadable messages; null: syslog is off. */
  syslogErrors?(sensor: string): unknown;
  /** Problems that do not make the collector unready (an output failing for a while): /readyz detail. */
  warnings(): Promise<string[]>;
  /** The Blocklist panel's data (`GET /api/blocklist`): the decisions store, watched from the first visitor. */
  blocklist?: BlocklistView;
  /** The clock the look-up's windows are measured on (tests inject it). */
  now?: () => number;
}

export interface AdminServer {
  readonly server: Server;
  listen(): Promise<AddressInfo>;
  close(): Promise<void>;
}

/** The dashboard's files, shipped in the package (`web/`): no build step, nothing from the internet. */
const WEB_DIR = new URL('../../web/', import.meta.url);
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/dashboard.js': { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  '/dashboard.css': { file: 'dashboard.css', type: 'text/css; charset=utf-8' },
  '/histogram.js': { file: 'histogram.js', type: 'text/javascript; charset=utf-8' },
  '/view-filters.js': { file: 'view-filters.js', type: 'text/javascript; charset=utf-8' },
  '/look-up.js': { file: 'look-up.js', type: 'text/javascript; charset=utf-8' },
  '/blocklist.js': { file: 'blocklist.js', type: 'text/javascript; charset=utf-8' },
  '/source-view.js': { file: 'source-view.js', type: 'text/javascript; charset=utf-8' },
  '/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

/** Routes the CLI reads: they do not start the dashboard's reader. */
const CLI_ROUTES = new Set(['/api/outputs', '/api/syslog-errors']);

/** Only files served from this origin, no inline script or style, no framing, no form posts. */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
};

export function createAdminServer(deps: AdminServerDeps): AdminServer {
  const tokenDigest = deps.token === null ? null : digest(deps.token);
  const files = new Map<string, Promise<Buffer>>();
  const connections = new AdminConnections();
  const histograms = createFilteredHistograms({
    reader: deps.store.reader,
    feed: deps.feed,
    ...(deps.now ? { now: deps.now } : {}),
  });
  // A socket that sends no whole request head within 5 s is closed, checked every second: a silent socket
  // lived 17-26 s with 10 s and Node's 30 s check, and 64 of them locked everyone out (issue 27 F1).
  const server = createServer(
    { requestTimeout: 30_000, headersTimeout: 5_000, connectionsCheckingInterval: 1_000 },
    (req, res) => {
      void handle(req, res).catch((error: Error) => {
        deps.logger.error({ err: error.message, path: req.url }, 'admin request failed');
        if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
        else res.destroy();
      });
    },
  );
  // The admin listener shares the process's descriptors with the sensors' port: bounded, with slots no idle
  // or unauthorised socket can take (admin-connections.ts). Not `maxConnections`: it refuses the newcomer,
  // where making room means closing an idle socket.
  server.on('connection', (socket: Socket) => connections.admit(socket));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    // Without a token, loopback is the only protection: a page that points its own name at 127.0.0.1 (DNS
    // rebinding) must not read the data, so only loopback names and the configured host are served.
    if (tokenDigest === null && !loopbackHost(req.headers.host, deps.address.host)) {
      sendJson(res, 403, { error: "Host must be localhost, a loopback address or admin.listen's host" });
      return;
    }
    if (tokenDigest !== null && !authorized(req.headers.authorization, tokenDigest)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="threatcol", Basic realm="threatcol"');
      sendJson(res, 401, { error: 'Authorization: Bearer <admin.token> required' });
      return;
    }
    connections.prove(req.socket);
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendJson(res, 405, { error: 'the admin listener is read-only: GET only' });
      return;
    }
    // The dashboard's reader starts with its first visitor: a collector nobody watches spends nothing on it.
    // The CLI's questions (outputs, syslog errors) do not start it either.
    if (url.pathname === '/' || (url.pathname.startsWith('/api/') && !CLI_ROUTES.has(url.pathname))) {
      deps.feed.start();
    }
    switch (url.pathname) {
      case '/healthz':
        sendJson(res, 200, { status: 'ok' });
        return;
      case '/readyz': {
        const reasons = await deps.notReadyReasons();
        const warnings = reasons.length === 0 ? await deps.warnings() : [];
        if (reasons.length === 0)
          sendJson(res, 200, { status: 'ready', ...(warnings.length > 0 ? { warnings } : {}) });
        else sendJson(res, 503, { status: 'not ready', reasons });
        return;
      }
      case '/metrics': {
        const { contentType, body } = await deps.renderMetrics();
        res.writeHead(200, { 'Content-Type': contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      case '/api/summary':
        sendJson(res, 200, { ...deps.feed.summary(), complete: deps.feed.warm });
        return;
      case '/api/sensors':
        sendJson(res, 200, { sensors: await sensorRows(deps.store, deps.defaultTimezone) });
        return;
      case '/api/outputs':
        sendJson(res, 200, { outputs: await deps.outputs() });
        return;
      case '/api/syslog-errors': {
        const report = deps.syslogErrors?.(url.searchParams.get('sensor') ?? '') ?? null;
        if (report === null)
          sendJson(res, 404, {
            error: 'syslog is not listening (syslog.listen, syslog.tcpListen, syslog.relpListen)',
          });
        else sendJson(res, 200, report);
        return;
      }
      case '/api/feed':
        await serveFeed(req, res, url.searchParams, deps.store, deps.feed);
        return;
      case '/api/histogram': {
        // The view's filters narrow it as they narrow the feed (the same parameters); an interval does not
        // (it is a bar of this histogram), and criticalities below `min` are zeroed in each bar.
        const range = url.searchParams.get('range') ?? '24h';
        if (range !== '24h' && range !== '7d') {
          sendJson(res, 400, JSON.parse(errorBody('BAD_REQUEST', 'range: 24h or 7d')));
          return;
        }
        const filter = feedFilter(url.searchParams);
        const narrowed = histogramFilter(filter);
        const h =
          narrowed === null
            ? { ...deps.feed.counts.histogram(range), complete: deps.feed.warm }
            : histograms.histogram(narrowed, range);
        const min = filter.minCriticality ?? 0;
        if (min > 0) for (const counts of h.buckets) counts.fill(0, 0, min);
        sendJson(res, 200, h);
        return;
      }
      case '/api/blocklist': {
        if (!deps.blocklist) {
          sendJson(res, 404, { error: 'no decisions store here' });
          return;
        }
        deps.blocklist.start();
        // `check`: the page's addresses, comma-separated; bounded, so one request costs a bounded answer.
        const check = (url.searchParams.get('check') ?? '').split(',').filter((a) => a !== '');
        if (check.length > MAX_CHECKED) {
          sendJson(res, 400, JSON.parse(errorBody('BAD_REQUEST', `check: at most ${MAX_CHECKED} addresses`)));
          return;
        }
        const at = (deps.now ?? Date.now)();
        const panel = deps.blocklist.panel(at);
        const marks = check.length > 0 ? { blocked: deps.blocklist.check(check, at) } : {};
        // maxChecked: the dashboard asks about no more addresses than this (its one home is MAX_CHECKED).
        sendJson(res, 200, { ...panel, maxChecked: MAX_CHECKED, ...marks });
        return;
      }
      case '/api/search':
        await serveSearch(res, url.searchParams, deps.store, deps.feed, (deps.now ?? Date.now)());
        return;
      case '/api/source':
        await serveSource(res, url.searchParams, deps, (deps.now ?? Date.now)());
        return;
    }
    const asset = Object.hasOwn(STATIC, url.pathname) ? STATIC[url.pathname] : undefined;
    if (asset === undefined) {
      sendJson(res, 404, { error: 'no such admin route: /, /healthz, /readyz, /metrics' });
      return;
    }
    let body = files.get(asset.file);
    if (!body) {
      body = readFile(new URL(asset.file, WEB_DIR));
      files.set(asset.file, body);
    }
    const bytes = await body;
    res.writeHead(200, { 'Content-Type': asset.type, 'Content-Length': bytes.length });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  }

  return {
    server,
    listen() {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: deps.address.host, port: deps.address.port }, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    close() {
      histograms.stop();
      deps.feed.stop();
      deps.blocklist?.stop();
      return new Promise((resolve) => {
        server.close(() => resolve());
        // Event streams never end by themselves.
        connections.destroyAll();
      });
    },
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Bearer <token>, or Basic with the token as password (what a browser's login prompt sends). */
function authorized(header: string | undefined, expected: Buffer): boolean {
  if (header === undefined) return false;
  const space = header.indexOf(' ');
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  let presented: string;
  if (scheme === 'bearer') presented = value;
  else if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    presented = decoded.slice(decoded.indexOf(':') + 1);
  } else return false;
  // Equal-length digests compared in constant time: neither the token nor its length leaks by timing.
  return timingSafeEqual(digest(presented), expected);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Whether a Host header names this listener from the box itself: localhost, 127.0.0.0/8, [::1] or `own`. */
function loopbackHost(header: string | undefined, own: string): boolean {
  if (header === undefined) return false;
  const host = header.startsWith('[')
    ? header.slice(0, header.indexOf(']') + 1)
    : header.replace(/:\d*$/, '');
  const name = host.toLowerCase();
  return (
    name === 'localhost' ||
    name === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) ||
    name === own.toLowerCase() ||
    `[${own.toLowerCase()}]` === name
  );
}
