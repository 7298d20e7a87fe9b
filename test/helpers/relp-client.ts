// A bare RELP client over TLS for the RELP input's tests: writes frames as given (broken ones too) and collects
// the server's answers, so a test sees exactly which transaction was acknowledged and when.
import { once } from 'node:events';
import { connect as netConnect } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { encodeRelpFrame, type RelpFrame, RelpFrameReader } from '../../src/relp-frames.js';
import { until } from './until.js';

export interface RelpTestClient {
  socket: TLSSocket;
  /** Every frame the server sent, in order. */
  answers: RelpFrame[];
  /** Resolves when the connection is closed (by either side). */
  closed: Promise<void>;
  /** Writes one frame. */
  send(txnr: number, command: string, data?: string): void;
  /** The server's answer to `txnr`, once it came (bounded wait). */
  answer(txnr: number): Promise<string>;
  /** Resolves at the next read from the server, or when the connection closes. */
  nextRead(): Promise<void>;
}

export async function connectRelp(
  port: number,
  identity: { cert?: string; key?: string },
  /** Keeps its side open after the server's end, as librelp does until its next message. */
  options: { halfOpen?: boolean } = {},
): Promise<RelpTestClient> {
  const socket = connect({
    ...(options.halfOpen
      ? { socket: netConnect({ host: '127.0.0.1', port, allowHalfOpen: true }) }
      : { host: '127.0.0.1', port }),
    rejectUnauthorized: false,
    ...identity,
  });
  socket.on('error', () => {});
  const reader = new RelpFrameReader(1 << 20);
  const answers: RelpFrame[] = [];
  socket.on('data', (chunk: Buffer) => answers.push(...reader.push(chunk)));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await once(socket, 'secureConnect');
  return {
    socket,
    answers,
    closed,
    send(txnr, command, data = '') {
      socket.write(encodeRelpFrame(txnr, command, data));
    },
    nextRead() {
      return Promise.race([new Promise<void>((resolve) => socket.once('data', () => resolve())), closed]);
    },
    async answer(txnr) {
      let found: RelpFrame | undefined;
      await until(
        () => {
          found = answers.find((a) => a.txnr === txnr && a.command === 'rsp');
          return found !== undefined;
        },
        20_000,
        `the answer to RELP txnr ${txnr}`,
      );
      return (found as RelpFrame).data.toString('utf8');
    },
  };
}
