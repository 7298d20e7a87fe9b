// The connection to NATS: connects in the background (serve starts while NATS is down), reconnects forever,
// logs each outage once at warn with the server list (never the credentials), and says why it is down.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  type NodeConnectionOptions,
} from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { ThreatcolError } from '../../errors.js';
import { waitAtMost } from '../../wait-at-most.js';
import { redactServer, serverCredentials } from './names.js';
import { natsTlsOptions } from './nats-tls.js';

/** How long closing waits for a drain (in-flight messages delivered) before it closes the client anyway. */
const DRAIN_MS = 2000;
export interface NatsLinkOptions {
  nats: Config['nats'];
  logger: Logger;
  now?: () => number;
  /** Shown in the server's connection list. */
  name?: string;
}

const RETRY_AFTER = { 'Retry-After': '1' };

export class NatsLink {
  private nc: NatsConnection | null = null;
  private connected = false;
  /** When the current outage began (null: connected). */
  private downSince: number | null;
  private lastError: string | null = null;
  private closed = false;
  private readonly waiters = new Set<() => void>();
  private readonly now: () => number;
  private readonly servers: string[];
  private warnTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: NatsLinkOptions) {
    this.now = options.now ?? Date.now;
    this.downSince = this.now();
    this.servers = options.nats.servers.map(redactServer);
  }

  /** Starts connecting; never rejects (a wrong password is retried too, and reported by reason()). */
  start(): void {
    const { nats } = this.options;
    const opts: NodeConnectionOptions = {
      servers: this.servers,
      name: this.options.name ?? `threatcol ${hostname()}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      reconnectJitter: 100,
      timeout: Math.min(nats.publishTimeoutMs, 5000),
      pingInterval: 10_000,
      maxPingOut: 2,
      ignoreAuthErrorAbort: true,
      // Otherwise the client builds two Error objects (stack traces) for every publish, in case it fails:
      // a third of the collector's CPU per record in the benchmark. Our logs keep only the message.
      noAsyncTraces: true,
    };
    // Credentials written into a server URL (the first that has some) count as if configured separately.
    const fromUrl = nats.servers.map(serverCredentials).find((c) => c !== null) ?? null;
    if (fromUrl && 'token' in fromUrl) opts.token = fromUrl.token;
    else if (fromUrl) {
      opts.user = fromUrl.user;
      opts.pass = fromUrl.pass;
    }
    if (nats.user !== null) {
      opts.user = nats.user;
      opts.pass = nats.password ?? '';
    }
    if (nats.token !== null) opts.token = nats.token;
    if (nats.credentialsFile !== null) {
      const file = nats.credentialsFile;
      // Read at each (re)connect: a rotated creds file is picked up without a restart.
      opts.authenticator = credsAuthenticator(() => readFileSync(file));
    }
    // Required (tls://, a CA, nats.tls.required or credentials beyond loopback): no CONNECT without TLS.
    const tls = natsTlsOptions(nats);
    if (tls) opts.tls = tls;
    // The first attempt's failure is only known by its absence: warn once if it has not connected soon.
    this.warnTimer = setTimeout(() => this.warnDown(), Math.min(nats.publishTimeoutMs, 2000));
    this.warnTimer.unref();
    this.attempt(opts);
  }

  /**
   * One round over the servers; after the first connection the client reconnects by itself, forever. Before
   * it, our own unref'd timer retries, so a CLI command can still exit and close() can still cancel.
   */
  private attempt(opts: NodeConnectionOptions): void {
    if (this.closed) return;
    connect(opts).then(
      (nc) => {
        if (this.closed) {
          void nc.close();
          return;
        }
        this.nc = nc;
        this.up(nc.getServer());
        void this.watchStatus(nc);
      },
      (error: Error) => {
        // The client's words for a server that offers no TLS when we require it: say why we require it.
        this.lastError = /does not support 'tls'/.test(error.message)
          ? `${error.message}, and TLS is required (a tls:// URL, nats.tls.ca, nats.tls.required, or credentials with a server that is not loopback): no credential was sent`
          : error.message;
        const retry = setTimeout(() => this.attempt(opts), 500);
        retry.unref();
      },
    );
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        this.downSince ??= this.now();
        this.lastError = `disconnected from ${redactServer(s.server)}`;
        this.warnDown();
      } else if (s.type === 'reconnect') {
        this.up(s.server);
      } else if (s.type === 'error') {
        this.lastError = s.error.message;
      }
    }
  }

  private warned = false;

  private warnDown(): void {
    if (this.connected || this.warned || this.closed) return;
    this.warned = true;
    this.options.logger.warn(
      { servers: this.servers, reason: this.lastError ?? 'no answer' },
      'NATS is unreachable: requests get 503 until it is back; retrying',
    );
  }

  private up(server: string): void {
    const outageMs = this.downSince === null ? 0 : this.now() - this.downSince;
    const wasWarned = this.warned;
    this.connected = true;
    this.downSince = null;
    this.warned = false;
    if (this.warnTimer) clearTimeout(this.warnTimer);
    this.options.logger[wasWarned ? 'warn' : 'info'](
      { server: redactServer(server), outageMs },
      wasWarned ? 'NATS is reachable again' : 'connected to NATS',
    );
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  /** The connection when connected now, else null. */
  current(): NatsConnection | null {
    return this.connected ? this.nc : null;
  }

  /** The connection object once it exists (possibly reconnecting), else null. */
  connection(): NatsConnection | null {
    return this.nc;
  }

  /** How long the current outage has lasted (0 when connected). */
  downForMs(): number {
    return this.downSince === null ? 0 : this.now() - this.downSince;
  }

  /** Why NATS cannot be used now, naming the servers (never a credential). */
  reason(): string {
    return `NATS unreachable (${this.servers.join(', ')})${this.lastError ? `: ${this.lastError}` : ''}`;
  }

  unavailable(detail?: string): ThreatcolError {
    return new ThreatcolError(
      'UNAVAILABLE',
      `the collector cannot store records right now: ${detail ?? this.reason()}`,
      { headers: RETRY_AFTER },
    );
  }

  /** Resolves with a connected connection, or rejects UNAVAILABLE after `timeoutMs`. */
  async ready(timeoutMs: number): Promise<NatsConnection> {
    const nc = this.current();
    if (nc) return nc;
    if (this.closed) throw this.unavailable('the NATS connection is closed');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(this.unavailable());
      }, timeoutMs);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.add(wake);
    });
    return this.ready(timeoutMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.warnTimer) clearTimeout(this.warnTimer);
    // Whoever waits for a connection learns now that none is coming (and its timer stops holding the process).
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    const nc = this.nc;
    const wasConnected = this.connected;
    this.nc = null;
    this.connected = false;
    if (!nc || nc.isClosed()) return;
    // Draining needs a server; while reconnecting it would wait for one, keeping the process alive. Whether we
    // were connected is what we last heard: a server that just died may not have been noticed yet, so a drain
    // gets a bounded time, and whatever it left (a client still reconnecting) is closed.
    if (wasConnected)
      await waitAtMost(
        nc.drain().catch(() => {}),
        DRAIN_MS,
      );
    if (!nc.isClosed()) await nc.close();
  }
}
