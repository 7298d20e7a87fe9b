// One identified RELP session (rsyslog's omrelp): each syslog message is answered `200 OK` only once it is durable.
import type { Socket } from 'node:net';
import type { BuiltRecord } from '../../records/stored-record.js';
import { encodeRelpFrame, type RelpFrame, RelpFrameReader, RelpTxnrSequence } from '../../relp-frames.js';
import { StallDeadline } from './stall-deadline.js';
import type { ConnectionDeps } from './syslog-connection.js';
import type { SyslogIntake } from './syslog-intake.js';

/** What the server offers in its answer to `open` (librelp's offer syntax: one `name=value` a line). */
const OFFERS = 'relp_version=0\nrelp_software=threatcol\ncommands=syslog';

/**
 * librelp's hint that the server ends the session (txnr 0, no data): rsyslog's omrelp then reconnects at its next
 * message instead of finding the connection dead on a write and waiting out its retry interval.
 */
const SERVERCLOSE = encodeRelpFrame(0, 'serverclose').toString('latin1');
/** A session still open this long after `close()` is cut: longer than an append may take (nats.publishTimeoutMs). */
const CLOSE_WAIT_MS = 10_000;
/** How long a session whose answers and serverclose are out waits for the sender to close its side. */
const END_WAIT_MS = 1000;

export interface RelpSession {
  /**
   * `serve` is stopping: reads nothing more, answers what it read once that is durable (or refused), then sends
   * `serverclose` and ends the connection; resolves when it is closed. Frames not yet read are not answered, so the
   * sender sends them again elsewhere.
   */
  close(): Promise<void>;
}

/** An answer waiting for its turn: RELP answers go out in the order the frames came. */
interface Pending {
  txnr: number;
  /** The answer's data; null while the message's append is not yet settled. */
  answer: string | null;
  /** The `close` answer: the session ends once it is written. */
  last?: boolean;
  /** The store refused its append: never answered, the session ends before it (the sender sends it again). */
  refused?: boolean;
}

/** How long a session ended for a refused append waits for its sender to close its side before it is destroyed. */
const REFUSED_CLOSE_MS = 5000;

/**
 * Serves `socket` as a RELP server for its sensor (`intake`) until it closes. The `syslog` frames of one read are appended in
 * one call (group commit with every other input); their `rsp 200 OK` are written when the append resolves.
 * When the store refuses it, the answers before them are written and the session ends with none to them:
 * librelp takes any answer, `rsp 500` too, as a message's end (it never sends it again), and sends every message
 * it has no answer for again on its next session. A message that is not a threat, or cannot be read, is counted
 * and answered 200 at once: sending it again would not change that. While
 * syslog.maxUnsyncedMessages answers are outstanding the socket is not read, whatever window the sender uses, nor
 * while the answers written wait for the sender to read them (the socket's write buffer over its high-water mark):
 * a sender that sends without reading holds a fixed amount, and is cut off after syslog.stallTimeoutMs.
 */
export function serveRelpSession(
  socket: Socket,
  intake: SyslogIntake,
  remoteAddr: string,
  deps: ConnectionDeps,
): RelpSession {
  const { config, logger, tally, held, throttledLog } = deps;
  const sequence = new RelpTxnrSequence();
  const pending: Pending[] = [];
  let opened = false;
  let ending = false;
  // A frame let go for the budget ends the session: the frames read with it are not stored either (librelp sends
  // every unanswered one again).
  const reader = new RelpFrameReader(
    config.syslog.maxMessageBytes,
    held?.budget ?? null,
    held
      ? () => {
          ending = true;
          held.evicted(socket);
        }
      : undefined,
  );
  /** The sender half-closed: the session ends once every answer it waits for is written. */
  let drained = false;
  /** serve is stopping: the session ends with `serverclose` once every answer is written. */
  let stopping = false;
  /** Answers are waiting for the sender to read them: nothing is read until they drain. */
  let backlogged = false;
  let drains = 0;
  const deadline = new StallDeadline(config.syslog.stallTimeoutMs, () => {
    throttledLog.warn(
      {
        sensor: intake.sensor.name,
        remoteAddr,
        stalledOn: backlogged ? 'answers unread' : 'frame unfinished',
      },
      backlogged
        ? 'RELP session closed: its sender read none of its answers for syslog.stallTimeoutMs'
        : 'RELP session closed: a frame did not complete within syslog.stallTimeoutMs',
    );
    ending = true;
    socket.destroy();
  });
  /** What the sender owes: reading its answers, else finishing the frame it began (not while paused by us). */
  const progress = (): void => {
    if (backlogged) deadline.owe(-1 - drains);
    else deadline.owe(reader.midFrame && !socket.isPaused() ? reader.framesStarted : null);
  };
  const readable = (): boolean =>
    !ending && !stopping && !backlogged && pending.length < config.syslog.maxUnsyncedMessages;
  const write = (out: string): void => {
    if (socket.write(out) || backlogged) return;
    backlogged = true;
    socket.pause();
    progress();
    socket.once('drain', () => {
      backlogged = false;
      drains++;
      if (readable() && socket.isPaused()) socket.resume();
      progress();
    });
  };
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));

  const flush = (): void => {
    let out = '';
    while (pending.length > 0 && (pending[0] as Pending).answer !== null) {
      const done = pending.shift() as Pending;
      out += encodeRelpFrame(done.txnr, 'rsp', done.answer as string).toString('utf8');
      if (done.last || (drained && pending.length === 0)) {
        ending = true;
        if (!socket.destroyed) socket.end(out);
        return;
      }
    }
    if (pending[0]?.refused) {
      // Its answers so far written, the session ends without one to the refused message: librelp takes any
      // answer, a 500 too, as the message's end and never sends it again, but sends every unanswered one on its
      // next session.
      ending = true;
      if (!socket.destroyed) {
        socket.end(out);
        setTimeout(() => socket.destroy(), REFUSED_CLOSE_MS).unref();
      }
      return;
    }
    if (stopping && pending.length === 0) {
      ending = true;
      if (!socket.destroyed) socket.end(out + SERVERCLOSE);
      return;
    }
    if (out !== '' && !socket.destroyed) write(out);
    if (readable() && socket.isPaused()) socket.resume();
    progress();
  };

  const broken = (reason: string): void => {
    tally.refuse('relp_protocol');
    throttledLog.warn(
      { sensor: intake.sensor.name, remoteAddr, reason },
      'RELP session closed: the sender broke the protocol',
    );
    ending = true;
    socket.destroy();
  };

  /** The record a `syslog` frame becomes; null: nothing to append, answered at once. */
  const readMessage = (frame: RelpFrame, nowMs: number): BuiltRecord | null => {
    if (frame.truncated) {
      intake.countOversize(1, config.syslog.oversize === 'drop');
      if (config.syslog.oversize === 'drop') return null;
    }
    return intake.read(frame.data, 0, frame.data.length, frame.truncated, nowMs);
  };

  const take = (frames: RelpFrame[]): void => {
    const nowMs = deps.now();
    const records: BuiltRecord[] = [];
    const waiting: Pending[] = [];
    for (const frame of frames) {
      if (ending) return;
      const outOfSequence = sequence.check(frame.txnr);
      if (outOfSequence !== null) {
        broken(outOfSequence);
        return;
      }
      if (frame.txnr === 0) continue; // a hint; a client sends none we act on
      const entry: Pending = { txnr: frame.txnr, answer: '200 OK' };
      if (frame.command === 'open') {
        const offered = frame.data.toString('utf8');
        if (!/^commands=(?:.*,)?syslog(?:,|$)/m.test(offered)) {
          entry.answer = '500 required command not supported by client';
          entry.last = true;
        } else if (!opened) {
          entry.answer = `200 OK\n${OFFERS}`;
        }
        opened = true;
      } else if (frame.command === 'close') {
        entry.answer = '';
        entry.last = true;
      } else if (!opened) {
        broken(`${frame.command} before open`);
        return;
      } else if (frame.command === 'syslog') {
        const record = readMessage(frame, nowMs);
        if (record !== null) {
          records.push(record);
          entry.answer = null;
          waiting.push(entry);
        }
      } else {
        entry.answer = '500 command not supported';
      }
      pending.push(entry);
      if (entry.last) break;
    }
    if (records.length > 0) {
      intake.store(records).then(
        () => {
          for (const entry of waiting) entry.answer = '200 OK';
          flush();
        },
        (error: Error) => {
          throttledLog.error(
            { sensor: intake.sensor.name, err: error.message },
            'cannot store RELP messages; the session ends unanswered, and the sender sends them again',
          );
          for (const entry of waiting) entry.refused = true;
          flush();
        },
      );
    }
    flush();
    if (!ending && (backlogged || pending.length >= config.syslog.maxUnsyncedMessages)) socket.pause();
  };

  socket.on('data', (chunk: Buffer) => {
    if (ending || stopping) return;
    const frames = reader.push(chunk);
    take(frames);
    if (reader.error !== null && !ending) broken(reader.error.reason);
    progress();
  });
  socket.on('end', () => {
    drained = true;
    if (pending.length === 0) {
      ending = true;
      socket.end();
    }
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    logger.debug(
      { sensor: intake.sensor.name, remoteAddr, err: error.code ?? error.message },
      'RELP connection error',
    );
  });
  socket.once('close', () => {
    deadline.stop();
    // What a frame cut off held goes back to the budget.
    reader.abandon();
  });
  return {
    async close() {
      if (!ending && !stopping) {
        stopping = true;
        socket.pause();
        flush();
      }
      const cut = setTimeout(() => socket.destroy(), CLOSE_WAIT_MS);
      // Once the answers and serverclose are out (this side ended), the sender has all it will get: librelp keeps
      // its side open until it next sends, so it is given a moment, not the whole wait. What it sends meanwhile is
      // read and dropped (the data handler ignores it): bytes left unread would turn the close into a reset.
      const ended = () => {
        socket.resume();
        setTimeout(() => socket.destroy(), END_WAIT_MS).unref();
      };
      if (socket.writableFinished) ended();
      else socket.once('finish', ended);
      await closed;
      clearTimeout(cut);
    },
  };
}
