// Sends syslog messages by RELP over TLS (`send syslog --relp`): a session per connection, a window of unanswered
// messages, and a count of what the collector answered `200 OK` (stored) or refused.
import type { Socket } from 'node:net';
import { encodeRelpFrame, type RelpFrame, RelpFrameReader } from '../relp-frames.js';
import { openSyslogSocket, type SyslogDestination, type SyslogSendSummary } from './syslog-send.js';

export interface RelpSendSummary extends SyslogSendSummary {
  /** Messages the collector answered 200 OK: stored (or counted as not a threat). */
  acknowledged: number;
  /** Messages answered otherwise (500: the collector could not store them), or unanswered when a session ended. */
  refused: number;
}

/** Unanswered messages per session at most: omrelp's default window. */
const WINDOW = 128;

/** A RELP session on `socket`: each frame sent resolves with the server's answer (null: the session ended first). */
function relpSession(socket: Socket) {
  const reader = new RelpFrameReader(64 * 1024);
  const waiting = new Map<number, (answer: string | null) => void>();
  let txnr = 0;
  let freed: (() => void) | null = null;
  const endAll = () => {
    for (const resolve of waiting.values()) resolve(null);
    waiting.clear();
    freed?.();
  };
  socket.on('data', (chunk: Buffer) => {
    const frames: RelpFrame[] = reader.push(chunk);
    for (const frame of frames) {
      if (frame.command !== 'rsp') continue; // a serverclose hint: the close follows
      waiting.get(frame.txnr)?.(frame.data.toString('utf8'));
      waiting.delete(frame.txnr);
      freed?.();
    }
    if (reader.error !== null) socket.destroy();
  });
  socket.on('close', endAll);
  socket.on('error', () => {});
  return {
    send(command: string, data: string): Promise<string | null> {
      txnr++;
      const answer = new Promise<string | null>((resolve) => waiting.set(txnr, resolve));
      if (socket.destroyed) endAll();
      else socket.write(encodeRelpFrame(txnr, command, data));
      return answer;
    },
    /** Resolves once fewer than `n` frames are unanswered. */
    async below(n: number): Promise<void> {
      while (waiting.size >= n) await new Promise<void>((resolve) => (freed = resolve));
    },
  };
}

/** Sends `count` messages from `next(i)` over `concurrency` RELP sessions, waits for every answer, closes them. */
export async function sendRelp(
  to: SyslogDestination,
  count: number,
  concurrency: number,
  next: (i: number) => string,
): Promise<RelpSendSummary> {
  const started = process.hrtime.bigint();
  const sockets = await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, () => openSyslogSocket(to)),
  );
  let sent = 0;
  let bytes = 0;
  let acknowledged = 0;
  let refused = 0;
  await Promise.all(
    sockets.map(async (socket) => {
      const session = relpSession(socket);
      const opened = await session.send('open', 'relp_version=0\nrelp_software=threatcol\ncommands=syslog');
      if (opened === null || !opened.startsWith('200')) {
        socket.destroy();
        throw new Error(`the collector refused the RELP session: ${opened ?? 'connection closed'}`);
      }
      const answers: Promise<void>[] = [];
      while (sent < count) {
        const message = next(sent++);
        bytes += Buffer.byteLength(message);
        answers.push(
          session.send('syslog', message).then((answer) => {
            if (answer === '200 OK') acknowledged++;
            else refused++;
          }),
        );
        await session.below(WINDOW);
      }
      await Promise.all(answers);
      await session.send('close', '');
      socket.end();
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { messages: sent, bytes, connections: sockets.length, seconds, acknowledged, refused };
}
