// A worker's connections as the primary's one table counts them (`serve --workers`): numbered here, told to the
// primary when kept, proven and closed, and closed here when the primary says so (over a cap, or to make room).
import type { Socket } from 'node:net';
import type { ClosedReason } from '../connection-slots.js';
import type { WorkerMessage } from './messages.js';

export class CountedSockets {
  readonly #sockets = new Map<number, { socket: Socket; closed: (reason: ClosedReason) => void }>();
  #next = 0;

  constructor(private readonly send: (message: WorkerMessage) => void) {}

  /**
   * Tells the primary of a socket kept here; returns how to tell it the socket proved itself. `closed`: the
   * listener's word when the primary closes it (counted and logged there).
   */
  admit(socket: Socket, group: string, closed: (reason: ClosedReason) => void): () => void {
    const conn = ++this.#next;
    this.#sockets.set(conn, { socket, closed });
    this.send({ tc: 'conn-open', conn, group });
    socket.once('close', () => {
      // A connection the primary closed is no longer counted there.
      if (this.#sockets.delete(conn)) this.send({ tc: 'conn-close', conn });
    });
    return () => {
      if (this.#sockets.has(conn)) this.send({ tc: 'conn-proven', conn });
    };
  }

  /** The primary closed `conn`: refused over a cap, or `evicted` to make room for a newcomer. */
  closedByPrimary(conn: number, evicted: boolean): void {
    const open = this.#sockets.get(conn);
    this.#sockets.delete(conn);
    // One closed here already (a newcomer on this worker made room from it) was counted and logged then.
    if (open === undefined || open.socket.destroyed) return;
    open.closed(evicted ? 'evicted' : 'refused');
    open.socket.destroy();
  }
}
