// One identified syslog connection: frames, reads and stores its messages, never reading further than it can store.
import type { Socket } from 'node:net';
import type { HeldBudget } from '../../held-bytes.js';
import type { LogThrottle } from '../../log-throttle.js';
import type { BuiltRecord } from '../../records/stored-record.js';
import { type FrameSink, SyslogFramer } from './framer.js';
import { closeStalledFrames } from './stall-deadline.js';
import type { IntakeDeps, SyslogIntake } from './syslog-intake.js';

export type ConnectionDeps = IntakeDeps & {
  /**
   * The bytes every connection of the listeners may hold in unfinished messages (held-bytes.ts), and what to do
   * with a connection whose message was let go for another's room (count, log, close); none: no shared budget.
   */
  held?: { budget: HeldBudget; evicted: (socket: Socket) => void };
  /**
   * What every connection of the listeners logs of a failure each of them may meet at once (a store refusing, a
   * stall): a line per message and log.rejectIntervalMs, then how many more.
   */
  throttledLog: LogThrottle;
};

export interface SyslogConnection {
  /**
   * At the stop, before the store closes: each append the store refused is tried once more now (not at its
   * retry's second), and this resolves when every append of the connection has settled. The messages were read
   * and taken by TCP: their sender will not send them again.
   */
  settle(): Promise<void>;
  /** Resolves when the appends under way now have settled (stored, or given up at the stop). */
  settled(): Promise<void>;
}

/** How long a failed append waits before it is tried again (the connection stays paused meanwhile). */
const RETRY_MS = 1000;

/**
 * Serves `socket` for its sensor (`intake`) until it closes. Every chunk's threats are appended in one call (the record log
 * groups concurrent calls into one fsync). While more than syslog.maxUnsyncedMessages of this connection's
 * messages are not yet durable the socket is paused, so TCP pushes back on the sender; an append the store
 * refuses is retried with the socket paused until it is stored, never dropped.
 */
export function serveSyslogConnection(
  socket: Socket,
  intake: SyslogIntake,
  remoteAddr: string,
  deps: ConnectionDeps,
  /** Called at the first message read (plain TCP: what proves a connection matched by address alone). */
  firstMessage: () => void = () => {},
): SyslogConnection {
  const { config, logger, held, throttledLog } = deps;
  const framer = new SyslogFramer({
    maxMessageBytes: config.syslog.maxMessageBytes,
    oversize: config.syslog.oversize,
    ...(held ? { budget: held.budget, evicted: () => held.evicted(socket) } : {}),
  });
  let unsynced = 0;
  /**
   * Appends the store refused, not yet stored. Nothing more is read while one waits for its retry: what is read
   * after it would be stored before it, and held in memory beside it.
   */
  let refused = 0;
  let closed = false;
  let reportedOversize = 0;

  /** Appends not yet settled (stored, or given up at the stop). */
  const outstanding = new Set<Promise<void>>();
  /** Each refused append waiting for its retry: tries it now. */
  const retries = new Set<() => void>();
  let stopping = false;

  /**
   * Reads the socket only while fewer than syslog.maxUnsyncedMessages of its messages wait to be durable and no
   * refused append waits; else TCP holds the sender back. The stall clock is told either way: when the store's
   * answer pauses or resumes the connection, no read tells it (a message begun owes nothing while paused).
   */
  const flow = (): void => {
    if (closed) return;
    if (unsynced >= config.syslog.maxUnsyncedMessages || refused > 0) socket.pause();
    else if (socket.isPaused()) socket.resume();
    stallClock();
  };

  const append = (records: BuiltRecord[]): void => {
    unsynced += records.length;
    flow();
    let wasRefused = false;
    const settled = new Promise<void>((resolve) => {
      const attempt = (): void => {
        intake.store(records).then(
          () => {
            unsynced -= records.length;
            if (wasRefused) refused--;
            flow();
            resolve();
          },
          (error: Error) => {
            if (stopping) {
              // Tried once more at the stop, before the store closes: the sender had them, read and taken by
              // TCP, and will not send them again.
              logger.error(
                { sensor: intake.sensor.name, err: error.message, messages: records.length },
                'cannot store syslog messages at the stop; they are lost',
              );
              resolve();
              return;
            }
            if (!wasRefused) {
              wasRefused = true;
              refused++;
            }
            flow();
            throttledLog.error(
              { sensor: intake.sensor.name, err: error.message },
              'cannot store syslog messages; retrying',
            );
            const timer = setTimeout(now, RETRY_MS);
            timer.unref();
            function now(): void {
              clearTimeout(timer);
              retries.delete(now);
              attempt();
            }
            retries.add(now);
          },
        );
      };
      attempt();
    });
    outstanding.add(settled);
    void settled.then(() => outstanding.delete(settled));
  };

  // A read's messages are read as the framer finds them, at one time, and appended in one call.
  let nowMs = 0;
  let records: BuiltRecord[] = [];
  let first = true;
  const read: FrameSink = (bytes, start, end, truncated) => {
    if (first) {
      first = false;
      firstMessage();
    }
    const record = intake.read(bytes, start, end, truncated, nowMs);
    if (record !== null) records.push(record);
  };
  const take = (frame: (sink: FrameSink) => void): void => {
    nowMs = deps.now();
    frame(read);
    // Dropped oversize messages give no frame but are counted all the same.
    const oversize = framer.counts.oversize - reportedOversize;
    if (oversize > 0) intake.countOversize(oversize, config.syslog.oversize === 'drop');
    reportedOversize = framer.counts.oversize;
    if (records.length === 0) return;
    append(records);
    records = [];
  };

  socket.on('data', (chunk: Buffer) => take((sink) => framer.pushTo(chunk, sink)));
  const stallClock = closeStalledFrames(socket, framer, config.syslog.stallTimeoutMs, () =>
    throttledLog.warn(
      { sensor: intake.sensor.name, remoteAddr },
      'syslog connection closed: a message did not complete within syslog.stallTimeoutMs',
    ),
  );
  socket.on('end', () => {
    take((sink) => framer.endTo(sink));
    // The sender half-closed: this side ends once its messages are stored, so the end tells it so.
    void settled().then(() => socket.end());
  });
  socket.on('close', () => {
    closed = true;
    // After `end` (if it came), a message the connection was cut inside of is lost: counted, not stored.
    framer.abandon();
    if (framer.counts.incomplete > 0) intake.countIncomplete(framer.counts.incomplete);
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    logger.debug(
      { sensor: intake.sensor.name, remoteAddr, err: error.code ?? error.message },
      'syslog connection error',
    );
  });
  const settled = () => Promise.all(outstanding).then(() => {});
  return {
    settle() {
      stopping = true;
      for (const retry of [...retries]) retry();
      return settled();
    },
    settled,
  };
}
