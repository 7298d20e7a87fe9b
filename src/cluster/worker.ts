// One worker of `serve --workers`: the collector (daemon/start-daemon.ts) on the listener the primary shares,
// running the configuration the primary hands it, with its own segments, and its stats, rate-limit tokens and
// connection counts going through the primary over IPC.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load-config.js';
import { type Daemon, startDaemon } from '../daemon/start-daemon.js';
import { CountedSockets } from './counted-sockets.js';
import { IpcDedupeIndex } from './ipc-dedupe.js';
import { IpcRequests } from './ipc-requests.js';
import { IpcSensorStats } from './ipc-stats.js';
import { reportSyslogTally } from './ipc-syslog-tally.js';
import { LeasedRateLimiter, type LeaseReply } from './leased-rate-limit.js';
import { isPrimaryMessage, type PrimaryMessage, type WorkerMessage } from './messages.js';

export interface WorkerOptions {
  /** The worker's logger, made for the configuration the primary hands over. */
  logger: (loaded: LoadedConfig) => Logger;
  /** This worker's slot, 1..workers; stable across restarts, part of its segment names. */
  id: number;
  workers: number;
  /** The inherited listening socket the primary listens on for everyone (socket activation). */
  listenFd?: number;
  /** The IPC channel to the primary (process.send / process.on('message') in a real worker). */
  channel: WorkerChannel;
  /** Hooks SIGTERM/SIGINT sent to this process directly (systemd signals the whole unit). */
  onSignal: (stop: () => void) => void;
  /** Starts the collector (tests: a stand-in). */
  start?: typeof startDaemon;
}

export interface WorkerChannel {
  send(message: WorkerMessage, callback?: (error: Error | null) => void): void;
  onMessage(handler: (message: unknown) => void): void;
  /** The primary went away (node:cluster itself then ends the worker at once, status 0). */
  onDisconnect(handler: () => void): void;
  disconnect(): void;
}

export async function runWorker(options: WorkerOptions): Promise<number> {
  const { channel } = options;
  let connected = true;
  const send = (message: WorkerMessage) => {
    if (connected) channel.send(message);
  };
  const inbox = new PrimaryInbox(channel);
  // The primary's configuration, not the file's: a file edited since the start and not applied (or broken)
  // would give a worker restarted after a crash other settings than the collector runs (another dedupe window,
  // data directory or store).
  send({ tc: 'config-request' });
  const loaded = await inbox.configuration;
  const logger = options.logger(loaded);

  const leases = new IpcRequests<LeaseReply>();
  const limiter = new LeasedRateLimiter(loaded.config.rateLimit.recordsPerSecond, (sensor, need, want) =>
    leases.ask((req) => send({ tc: 'lease', req, sensor, need, want })),
  );

  /** Every listener's connections (HTTPS and syslog) in the primary's one table (connection-slots.ts). */
  const counted = new CountedSockets(send);

  const stats = new IpcSensorStats((deltas) => send({ tc: 'stats', deltas }));
  const statsIntervalMs = Math.min(1000, loaded.config.store.statsIntervalMs);
  const syslogTally = reportSyslogTally(loaded.config, statsIntervalMs, (delta) =>
    send({ tc: 'syslog-tally', delta }),
  );
  // The files backend deduplicates in the primary's one window; the NATS stream does it by itself.
  const { config } = loaded;
  const dedupe =
    config.store.backend === 'files' && config.dedupe.windowSeconds > 0 ? new IpcDedupeIndex(send) : null;
  /** The outputs as the primary runs them (it says so at start and at each reload, SIGHUP or a changed file). */
  let outputs = config.outputs;
  let daemon: Daemon | null = null;
  /** What the daemon must do once it is up: a reload or stop the primary sent while it started. */
  const held: PrimaryMessage[] = [];
  inbox.take((message) => {
    if (daemon === null && (message.tc === 'reload' || message.tc === 'stop')) held.push(message);
    else handle(message);
  });

  const started = await (options.start ?? startDaemon)({
    loaded,
    logger,
    ...(options.listenFd === undefined ? {} : { listenFd: options.listenFd }),
    worker: {
      id: options.id,
      workers: options.workers,
      stats,
      limiter,
      admitConnection: (socket, group, closed) => counted.admit(socket, group, closed),
      syslogTally: syslogTally?.tally ?? null,
      dedupe,
      outputs: () => outputs,
    },
    // A reload applies the live parts of the configuration the primary sent with it.
    reread: () => inbox.latest,
  });
  started.onConfigReloaded({
    keys: ['rateLimit.recordsPerSecond'],
    apply: (_previous, next) => limiter.configure(next.rateLimit.recordsPerSecond),
  });
  daemon = started;
  for (const message of held.splice(0)) handle(message);

  /** A message of the primary; reload and stop only once the daemon is up. */
  function handle(message: PrimaryMessage): void {
    switch (message.tc) {
      case 'reload':
        daemon?.reload();
        if (daemon) send({ tc: 'reloaded', sha256: daemon.fingerprint });
        break;
      case 'outputs':
        outputs = message.outputs;
        break;
      case 'stop':
        daemon?.stop();
        break;
      case 'conn-refused':
        counted.closedByPrimary(message.conn, message.evicted === true);
        break;
      case 'dedupe-claimed':
        dedupe?.onReply(message);
        break;
      case 'lease-reply':
        leases.answer(message.req, { granted: message.granted, retryAfter: message.retryAfter });
        break;
    }
  }

  channel.onDisconnect(() => {
    if (!connected) return; // our own disconnect, after the daemon stopped
    connected = false;
    leases.close({ granted: 0, retryAfter: 1 });
    dedupe?.disconnected();
    logger.warn('the primary process is gone; stopping');
    started.stop();
  });
  options.onSignal(() => started.stop());
  send({ tc: 'listening', address: started.address });

  const code = await started.done;
  syslogTally?.stop();
  // The last counts must reach the primary before the channel closes.
  if (connected) {
    await new Promise<void>((resolve) => channel.send({ tc: 'stats', deltas: [] }, () => resolve()));
    connected = false;
    channel.disconnect();
  }
  return code;
}

/**
 * The primary's messages from the first moment on (node's IPC keeps no message for a listener added later, so
 * a SIGHUP forwarded while this worker started was lost), held until a handler takes them; and the configuration
 * the primary runs, as it last said (at this worker's start, then with each reload).
 */
class PrimaryInbox {
  readonly configuration: Promise<LoadedConfig>;
  private handed: LoadedConfig | null = null;
  private handler: ((message: PrimaryMessage) => void) | null = null;
  private readonly queue: PrimaryMessage[] = [];

  constructor(channel: WorkerChannel) {
    let resolve: (loaded: LoadedConfig) => void = () => {};
    this.configuration = new Promise((r) => {
      resolve = r;
    });
    channel.onMessage((message) => {
      if (!isPrimaryMessage(message)) return;
      if (message.tc === 'config' || message.tc === 'reload') this.handed = message.loaded;
      if (message.tc === 'config') resolve(message.loaded);
      else if (this.handler) this.handler(message);
      else this.queue.push(message);
    });
  }

  /** The configuration the primary last handed over (once `configuration` resolved). */
  get latest(): LoadedConfig {
    if (this.handed === null) throw new Error('no configuration from the primary yet');
    return this.handed;
  }

  /** Hands `handler` every message held so far, then each as it comes. */
  take(handler: (message: PrimaryMessage) => void): void {
    this.handler = handler;
    for (const message of this.queue.splice(0)) handler(message);
  }
}
