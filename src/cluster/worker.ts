// One worker of `serve --workers`: the collector (daemon/start-daemon.ts) on the listener the primary shares,
// with its own segments, and its stats, rate-limit tokens and connection counts going through the primary
// over IPC.
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
  loaded: LoadedConfig;
  logger: Logger;
  /** This worker's slot, 1..workers; stable across restarts, part of its segment names. */
  id: number;
  workers: number;
  /** The inherited listening socket the primary listens on for everyone (socket activation). */
  listenFd?: number;
  /** The IPC channel to the primary (process.send / process.on('message') in a real worker). */
  channel: WorkerChannel;
  /** Hooks SIGTERM/SIGINT sent to this process directly (systemd signals the whole unit). */
  onSignal: (stop: () => void) => void;
  /** Reads the configuration again when the primary forwards a reload (as the primary does, it says what changed). */
  reread?: () => LoadedConfig;
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
  const { channel, logger } = options;
  let connected = true;
  const send = (message: WorkerMessage) => {
    if (connected) channel.send(message);
  };

  const leases = new IpcRequests<LeaseReply>();
  const limiter = new LeasedRateLimiter(
    options.loaded.config.rateLimit.recordsPerSecond,
    (sensor, need, want) => leases.ask((req) => send({ tc: 'lease', req, sensor, need, want })),
  );

  /** Every listener's connections (HTTPS and syslog) in the primary's one table (connection-slots.ts). */
  const counted = new CountedSockets(send);

  const stats = new IpcSensorStats((deltas) => send({ tc: 'stats', deltas }));
  const statsIntervalMs = Math.min(1000, options.loaded.config.store.statsIntervalMs);
  const syslogTally = reportSyslogTally(options.loaded.config, statsIntervalMs, (delta) =>
    send({ tc: 'syslog-tally', delta }),
  );
  // The files backend deduplicates in the primary's one window; the NATS stream does it by itself.
  const { config } = options.loaded;
  const dedupe =
    config.store.backend === 'files' && config.dedupe.windowSeconds > 0 ? new IpcDedupeIndex(send) : null;
  /** The outputs as the primary runs them (it says so at start and at each reload, SIGHUP or a changed file). */
  let outputs = config.outputs;
  let daemon: Daemon | null = null;
  /** What the daemon must do once it is up: a reload or stop the primary sent while it started. */
  const held: PrimaryMessage[] = [];
  // Listening before the daemon starts: node's IPC keeps no message for a listener added later, so a SIGHUP
  // the primary forwarded while this worker started (reading its certificate, opening the store) was lost.
  channel.onMessage((message) => {
    if (!isPrimaryMessage(message)) return;
    if (daemon === null && (message.tc === 'reload' || message.tc === 'stop')) held.push(message);
    else handle(message);
  });

  const started = await (options.start ?? startDaemon)({
    loaded: options.loaded,
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
    ...(options.reread ? { reread: options.reread } : {}),
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
