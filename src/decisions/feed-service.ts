// Serves the feeds (GET /feeds/NAME on the HTTPS listener): HTTP Basic with the feed's own credentials (401
// for a wrong password and an unknown feed alike: names are not disclosed), each feed rendered once per change
// of the decisions and kept with its ETag, 304 for a poll that already has it.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Logger } from 'pino';
import type { BlocklistConfig } from '../config/blocklist-schema.js';
import { digestFromHash, digestsEqual, keyDigest } from '../keys.js';
import type { DecisionsState, DecisionsStore, FeedEntry } from '../store/decisions.js';
import { emptyDecisions } from '../store/decisions.js';
import { FeedFailures } from './feed-failures.js';
import { feedItemSteps } from './feed-items.js';
import { overlaps, parseNetwork, unitOf } from './networks.js';
import { CONTENT_TYPES, renderSteps } from './render-feed.js';
import { runInSlices } from './steps.js';

const gzipAsync = promisify(gzip);
/** How long a render runs before it lets other callbacks (requests) run. */
const RENDER_SLICE_MS = 10;
/** Formats that carry each block's remaining time are rendered again at least this often. */
const TIMED_RENDER_MS = 60_000;
/** Compared against when the feed does not exist, so an unknown name costs what a wrong password does. */
const NO_FEED_DIGEST = keyDigest('no such feed');
/**
 * A /metrics scrape takes a feed's counts from its last render when it is this recent, whatever changed since: a
 * scrape every 15 s rendered every feed whose blocks had changed, on the serving thread (0.2-0.3 s for each
 * 100,000-entry feed, under an attack every time), work the firewalls' own polls do anyway.
 */
const REPORT_FRESH_MS = 60_000;
/** Smaller bodies are sent as they are (gzip would save little). */
const GZIP_FROM_BYTES = 1024;
/** How often a feed's last fetch is written while its status stays the same. */
const FETCH_NOTE_MS = 60_000;
/** ... and at most this often whatever the status (a firewall's 200s between someone's 401s). */
const FETCH_NOTE_MIN_MS = 5000;
/** How long a feed's successful fetch keeps a login refused from another address from being noted over it. */
const SUCCESS_OUTRANKS_REFUSALS_MS = 3_600_000;

interface Rendered {
  /** What it was rendered from: the feed's entry, the configuration's version, the changes of blocks and allows. */
  feed: FeedEntry;
  configured: number;
  blocksChanged: number;
  allowChanged: number;
  body: Buffer;
  /** The body gzipped, made at the first request that asks for it. */
  gzipped?: Promise<Buffer>;
  etag: string;
  lastModified: string;
  /**
   * The body before this one had the same Last-Modified (both made in one second): a client whose
   * If-Modified-Since is that second may hold either, so it gets no 304 by date.
   */
  lastModifiedShared: boolean;
  contentType: string;
  /** The body is stale from this instant (a block or allow entry in it expires, or its times moved). */
  validUntil: number;
  /** When it was rendered (epoch ms). */
  at: number;
  entries: number;
  leftOut: number;
}

/** A render a feed's requests wait for: what it reads (set when it starts), and its answer. */
interface Queued {
  feed: FeedEntry;
  /** The configuration's version and the changes of blocks and allows it reads. */
  asked: string;
  started: boolean;
  answer: Promise<Rendered>;
}

export interface FeedService {
  /** Answers a request for `/feeds/<name>` (name as in the path, not yet checked). */
  /**
   * `authenticated`: told, with the request's socket, once its credentials are found good (the listener's
   * connection slots).
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    authenticated?: (socket: IncomingMessage['socket']) => void,
  ): void;
  configure(blocklist: BlocklistConfig): void;
  /**
   * For /metrics: each feed's entries and those its cap left out as of its last render (one is started in the
   * background when that is over a minute old, for the next scrape), its renders, and the requests answered.
   */
  report(): FeedReport;
  stop(): void;
}

export interface FeedReport {
  feeds: { feed: string; entries: number; leftOut: number; renders: number }[];
  /** Requests answered, by feed (`unknown` for a name that is no feed) and status. */
  requests: { feed: string; status: number; count: number }[];
  /** Requests answered 429 (too many failed logins from their address). */
  limited: number;
}

export function startFeedService(deps: {
  decisions: DecisionsStore;
  blocklist: BlocklistConfig;
  logger: Logger;
  now?: () => number;
  /** The processes serving feeds (`serve --workers`): each allows its share of an address's failed logins. */
  shareOf?: number;
}): FeedService {
  const now = deps.now ?? Date.now;
  let blocklist = deps.blocklist;
  let state: DecisionsState = emptyDecisions();
  /** Bumped by each reload (blocklist.allow may change). */
  let configured = 0;
  const cache = new Map<string, Rendered>();
  /** Renders by feed, for /metrics: each is a change to what the feed serves (or its blocks' times moving on). */
  const renders = new Map<string, number>();
  const failures = FeedFailures.shareOf(deps.shareOf ?? 1);
  /** By `feed status`: bounded by the feeds (every unknown name counts as one) and a handful of statuses. */
  const requests = new Map<string, number>();
  const count = (feed: string | null, status: number) => {
    const key = `${feed ?? 'unknown'} ${status}`;
    requests.set(key, (requests.get(key) ?? 0) + 1);
  };
  /** Whether the decisions were read once: until then no feed is known, and a poll is told to come back. */
  let loaded = false;
  const watch = deps.decisions.watch(
    (next) => {
      state = next;
      loaded = true;
      // A removed feed's body (megabytes for a large one) is not kept after it.
      for (const name of cache.keys()) if (!next.feeds.has(name)) cache.delete(name);
    },
    (error) => deps.logger.warn({ err: error.message }, 'cannot read the decisions; serving the last ones'),
  );

  /** The feed's last render when it still holds (nothing it serves changed, none of its blocks ended). */
  function fresh(feed: FeedEntry, at: number): Rendered | null {
    const cached = cache.get(feed.name);
    // A change elsewhere in the decisions (a fetch noted: each feed's polls write one a minute; an offence; another
    // feed) leaves it as it is: with F feeds polled, rendering all of them at each note was F^2 renders a minute.
    if (
      cached &&
      cached.feed === feed &&
      cached.configured === configured &&
      cached.blocksChanged === state.changed.block &&
      cached.allowChanged === state.changed.allow &&
      at < cached.validUntil
    )
      return cached;
    return null;
  }

  /**
   * The render each feed waits for (at most one runs per feed): what it was asked for (the feed's entry, the
   * configuration's version and the changes of blocks and allows), and its answer.
   */
  const rendering = new Map<string, Queued>();
  /** The render a /metrics scrape started, if it runs: one at a time, whatever the feeds. */
  let background: Promise<unknown> | null = null;
  const askedOf = () => `${configured} ${state.changed.block} ${state.changed.allow}`;

  /**
   * The feed's body as of now: its last render while it holds, else a render in slices (steps.ts). Requests that
   * come while one runs for the same decisions wait for it; after a change they wait for the next, which starts
   * when the running one ends: never a render of older decisions than the request saw, never two at once.
   */
  function renderFor(feed: FeedEntry): Promise<Rendered> {
    const cached = fresh(feed, now());
    if (cached) return Promise.resolve(cached);
    const asked = askedOf();
    const running = rendering.get(feed.name);
    // The same decisions, or a render queued that has not started: it will read them as they are then.
    if (running && running.feed === feed && (running.asked === asked || !running.started))
      return running.answer;
    const entry: Queued = {
      feed,
      asked,
      started: false,
      answer: (running ? running.answer.catch(() => {}) : Promise.resolve()).then(() => {
        entry.asked = askedOf();
        entry.started = true;
        return fresh(feed, now()) ?? render(feed);
      }),
    };
    rendering.set(feed.name, entry);
    entry.answer
      .finally(() => {
        if (rendering.get(feed.name) === entry) rendering.delete(feed.name);
      })
      .catch((error: Error) =>
        deps.logger.error({ err: error.message, feed: feed.name }, 'cannot render a feed'),
      );
    return entry.answer;
  }

  /**
   * Chooses and renders the feed in slices of RENDER_SLICE_MS: a 250,000-entry nftables feed is a third of a
   * second of work, which in one piece held every request to the listener behind it at each change.
   */
  async function render(feed: FeedEntry): Promise<Rendered> {
    const at = now();
    const from = { configured, blocksChanged: state.changed.block, allowChanged: state.changed.allow };
    renders.set(feed.name, (renders.get(feed.name) ?? 0) + 1);
    const selected = await runInSlices(feedItemSteps(feed, state, blocklist.allow, at), RENDER_SLICE_MS);
    let validUntil = selected.validUntil;
    if (feed.format === 'nftables' || feed.format === 'mikrotik')
      validUntil = Math.min(validUntil, at + TIMED_RENDER_MS);
    const body = Buffer.from(
      await runInSlices(renderSteps(feed.format, selected.items, at, feed.family), RENDER_SLICE_MS),
    );
    const cached = cache.get(feed.name);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    // Rendered again with the same body (a block this feed leaves out: another family, past its cap; an allow
    // entry covering none of its blocks): the same representation, so its Last-Modified (and If-Modified-Since
    // polls) stay as they were.
    const same = cached?.etag === etag;
    const lastModified =
      same && cached ? cached.lastModified : new Date(Math.floor(at / 1000) * 1000).toUTCString();
    const rendered: Rendered = {
      feed,
      ...from,
      body,
      ...(same && cached.gzipped ? { gzipped: cached.gzipped } : {}),
      etag,
      lastModified,
      lastModifiedShared: same ? cached.lastModifiedShared : cached?.lastModified === lastModified,
      contentType: CONTENT_TYPES[feed.format],
      validUntil,
      at,
      entries: selected.items.length,
      leftOut: selected.leftOut,
    };
    // A render of a feed removed meanwhile is not kept.
    if (state.feeds.get(feed.name) === feed) cache.set(feed.name, rendered);
    return rendered;
  }

  /** Each feed's last fetch as this collector last wrote it: written at most once a minute, or on a new status. */
  const written = new Map<string, { at: number; status: number }>();
  /**
   * A fetch with a new status that came within FETCH_NOTE_MIN_MS of the last write, written when that time is
   * up: else a 200 right after a 401 (a firewall's password just fixed) left 401 as the last fetch until the
   * firewall's next poll, minutes later.
   */
  const pending = new Map<string, { timer: NodeJS.Timeout; address: string; status: number; at: number }>();
  /** The feed's last successful fetch (200 or 304) known here: one not written yet, else the stored one. */
  function lastSuccess(feed: string): { address: string; at: number } | null {
    const waiting = pending.get(feed);
    if (waiting && (waiting.status === 200 || waiting.status === 304)) return waiting;
    const stored = state.fetches.get(feed);
    if (stored && (stored.status === 200 || stored.status === 304))
      return { address: stored.address, at: Date.parse(stored.at) };
    return null;
  }
  function writeFetch(feed: string, address: string, status: number, at: number): void {
    const waiting = pending.get(feed);
    if (waiting) clearTimeout(waiting.timer);
    pending.delete(feed);
    written.set(feed, { at, status });
    const value = { feed, at: new Date(at).toISOString(), address, status };
    deps.decisions.apply([{ kind: 'fetch', key: feed, value }]).catch((error: Error) => {
      deps.logger.debug({ err: error.message, feed }, "cannot note a feed's last fetch");
    });
  }
  function noteFetch(feed: string, address: string, status: number, at: number): void {
    // A login refused from elsewhere than the feed's last successful fetch, within the hour of it, is not the
    // firewall's: noted, a guesser's 401 every few seconds would hide the firewall's fetches from `feed list`, the
    // dashboard and `check`. The firewall's own refusals (a password rotated) come from its address.
    if (status === 401) {
      const success = lastSuccess(feed);
      if (success !== null && success.address !== address && at - success.at < SUCCESS_OUTRANKS_REFUSALS_MS)
        return;
    }
    const last = written.get(feed);
    if (
      !last ||
      (at - last.at >= FETCH_NOTE_MIN_MS && (last.status !== status || at - last.at >= FETCH_NOTE_MS))
    ) {
      writeFetch(feed, address, status, at);
      return;
    }
    const waiting = pending.get(feed);
    if (waiting) Object.assign(waiting, { address, status, at });
    else if (last.status !== status && at - last.at < FETCH_NOTE_MIN_MS) {
      const timer = setTimeout(
        () => {
          const note = pending.get(feed);
          pending.delete(feed);
          // The newest fetch since: written unless its status is the one written already.
          if (note && note.status !== written.get(feed)?.status)
            writeFetch(feed, note.address, note.status, note.at);
        },
        last.at + FETCH_NOTE_MIN_MS - at,
      );
      timer.unref();
      pending.set(feed, { timer, address, status, at });
    }
  }

  function unauthorized(res: ServerResponse): void {
    res.writeHead(401, {
      'WWW-Authenticate': 'Basic realm="threatcol"',
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'no-store',
    });
    res.end('unauthorized\n');
  }

  return {
    handle(req, res, name, authenticated) {
      const at = now();
      const address = clientAddress(req);
      if (!loaded) {
        // NATS unreachable since the start: every feed would look unknown, its firewall's right password refused
        // (PAN-OS stops enforcing a list it was refused) and counted as a failed login. A 503 keeps its last list.
        res.writeHead(503, { 'Retry-After': '5', 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('the blocklist is not read yet; retry shortly\n');
        count(null, 503);
        return;
      }
      // The credentials first (a hash of what was sent, as cheap as the limit's look-up): the right password is
      // never refused for what others at its address or behind its NAT sent; only failures meet the limit.
      const credentials = basicCredentials(req.headers.authorization);
      const feed = state.feeds.get(name) ?? null;
      const stored = feed ? digestFromHash(feed.passwordHash) : null;
      const presented = keyDigest(credentials?.password ?? '');
      const passwordOk = digestsEqual(presented, stored ?? NO_FEED_DIGEST) && stored !== null;
      const userOk = credentials !== null && feed !== null && credentials.user === feed.name;
      if (!passwordOk || !userOk || feed === null) {
        if (!failures.allowed(address, at)) {
          res.writeHead(429, {
            'Retry-After': String(failures.retryAfter(address, at)),
            'Content-Type': 'text/plain; charset=utf-8',
          });
          res.end('too many failed logins from this address\n');
          count(feed?.name ?? null, 429);
          return;
        }
        failures.failed(address, at);
        // Never the credentials; the name only as far as a feed name can go.
        deps.logger.debug(
          { feed: name.slice(0, 64), remoteAddr: address, status: 401 },
          'feed fetch refused',
        );
        if (feed) noteFetch(feed.name, address, 401, at);
        count(feed?.name ?? null, 401);
        unauthorized(res);
        return;
      }
      if (feed.from && feed.from.length > 0 && !fromAllowed(feed.from, address)) {
        noteFetch(feed.name, address, 403, at);
        count(feed.name, 403);
        res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('this feed is not served to this address\n');
        return;
      }
      authenticated?.(req.socket);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('only GET and HEAD\n');
        count(feed.name, 405);
        return;
      }
      // A failed render or gzip is logged once where it failed, not once per request that waited for it.
      answer(req, res, feed, address, at).catch(() => {
        count(feed.name, 503);
        if (res.headersSent) res.destroy();
        else {
          res.writeHead(503, { 'Retry-After': '60', 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('the feed cannot be rendered now\n');
        }
      });
    },
    configure(next) {
      blocklist = next;
      configured++;
    },
    report() {
      const feeds = [...state.feeds.values()].map((feed) => {
        const last = cache.get(feed.name);
        // The scrape reports the last render (of this feed's name: a reload or a rotation makes a new entry of
        // the same feed); one over a minute old that no longer holds (or none, or of an older entry) is rendered
        // again in the background for the next scrape, one feed at a time (never on the scrape's own time). One
        // that still holds, however old, is what a render would give: it never takes the turn of another feed.
        if (
          background === null &&
          (last === undefined ||
            last.feed !== feed ||
            last.configured !== configured ||
            (now() - last.at >= REPORT_FRESH_MS && fresh(feed, now()) === null))
        ) {
          background = renderFor(feed)
            .catch(() => {})
            .finally(() => {
              background = null;
            });
        }
        return {
          feed: feed.name,
          entries: last?.entries ?? 0,
          leftOut: last?.leftOut ?? 0,
          renders: renders.get(feed.name) ?? 0,
        };
      });
      const answered = [...requests].map(([key, n]) => {
        const space = key.lastIndexOf(' ');
        return { feed: key.slice(0, space), status: Number(key.slice(space + 1)), count: n };
      });
      return { feeds, requests: answered, limited: failures.limited };
    },
    stop() {
      watch.stop();
      for (const { timer } of pending.values()) clearTimeout(timer);
      pending.clear();
    },
  };

  /** A request past its checks: the feed's body (rendered now or before), 304 when the client has it. */
  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    feed: FeedEntry,
    address: string,
    at: number,
  ): Promise<void> {
    const rendered = await renderFor(feed);
    const gzip = rendered.body.length >= GZIP_FROM_BYTES && acceptsGzip(req.headers['accept-encoding']);
    // Made once per body, off this thread (zlib's pool), at the first request that asks for it.
    if (gzip)
      rendered.gzipped ??= gzipAsync(rendered.body).catch((error: Error) => {
        // Not kept: the next request tries again.
        rendered.gzipped = undefined;
        deps.logger.error({ err: error.message, feed: feed.name }, 'cannot compress a feed');
        throw error;
      });
    const gzipped = gzip ? await rendered.gzipped : undefined;
    // The client left while its body was made.
    if (res.destroyed) return;
    // Each encoding is its own representation, with its own tag.
    const etag = gzip ? `${rendered.etag.slice(0, -1)}-gz"` : rendered.etag;
    const headers = {
      ETag: etag,
      Vary: 'Accept-Encoding',
      'Last-Modified': rendered.lastModified,
      'Cache-Control': 'no-cache',
      'X-Threatcol-Entries': String(rendered.entries),
      'X-Threatcol-Left-Out': String(rendered.leftOut),
    };
    if (notModified(req, etag, rendered)) {
      noteFetch(feed.name, address, 304, at);
      count(feed.name, 304);
      res.writeHead(304, headers);
      res.end();
      return;
    }
    noteFetch(feed.name, address, 200, at);
    count(feed.name, 200);
    const body = gzipped ?? rendered.body;
    res.writeHead(200, {
      ...headers,
      'Content-Type': rendered.contentType,
      'Content-Length': body.length,
      ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    });
    if (req.method === 'HEAD') res.end();
    else sendInSlices(res, body);
  }
}

/** A body is written this much at a time, each slice once the socket took the one before. */
const SLICE_BYTES = 64 * 1024;

/**
 * Writes a feed's body (shared by every poll of it) in slices: a reader that reads slowly, or not at all, holds
 * a slice and its socket's buffers, not an encrypted copy of the whole body (a 150,000-entry feed is megabytes).
 */
function sendInSlices(res: ServerResponse, body: Buffer): void {
  let at = 0;
  const next = () => {
    while (at < body.length) {
      if (res.destroyed) return;
      const slice = body.subarray(at, at + SLICE_BYTES);
      at += slice.length;
      if (!res.write(slice)) {
        res.once('drain', next);
        return;
      }
    }
    res.end();
  };
  next();
}

/**
 * Whether the client already has this representation (RFC 9110 13.1.2-3): `If-None-Match` with its tag among
 * a list, weak (`W/`) or not, or `*`; without `If-None-Match`, `If-Modified-Since` not before Last-Modified
 * (after it, when the body before was made in the same second).
 */
function notModified(req: IncomingMessage, etag: string, rendered: Rendered): boolean {
  const match = req.headers['if-none-match'];
  if (match !== undefined) {
    return match.split(',').some((part) => {
      const tag = part.trim();
      return tag === '*' || tag.replace(/^W\//, '') === etag;
    });
  }
  const since = req.headers['if-modified-since'];
  if (since === undefined) return false;
  const at = Date.parse(since);
  const modified = Date.parse(rendered.lastModified);
  return !Number.isNaN(at) && (rendered.lastModifiedShared ? at > modified : at >= modified);
}

/**
 * Whether `Accept-Encoding` takes gzip: named with a q above 0, or `*` above 0 when gzip is not named (a
 * named `gzip;q=0` refuses it whatever `*` says).
 */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let gzip: boolean | null = null;
  let any: boolean | null = null;
  for (const part of header.split(',')) {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const allowed = !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p));
    if (coding.trim() === 'gzip') gzip = (gzip ?? false) || allowed;
    else if (coding.trim() === '*') any = (any ?? false) || allowed;
  }
  return gzip ?? any ?? false;
}

/** The client's address, IPv4-mapped IPv6 as plain IPv4. */
function clientAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** Whether `address` lies in one of a feed's `--from` networks. */
function fromAllowed(networks: readonly string[], address: string): boolean {
  const client = unitOf(address, 32, 128);
  if (client === null) return false;
  return networks.some((text) => {
    const network = parseNetwork(text);
    return network !== null && network.prefix <= client.prefix && overlaps(network, client);
  });
}

/** `Basic base64(user:password)`, or null. */
function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  if (header === undefined || header.length > 1024) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return null;
  const text = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon === -1) return null;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}
