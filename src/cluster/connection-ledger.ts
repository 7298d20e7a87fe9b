// The primary's view of every worker's connections under the one connection policy (connection-slots.ts), so
// `server.maxConnectionsPerAddress` and `server.maxConnections` hold for the daemon, not per worker.
import { type SlotLimits, SlotTable } from '../connection-slots.js';

/** A worker's connection: the worker's id and the connection's number in it. */
export interface LedgerEntry {
  worker: number;
  conn: number;
}

export class ConnectionLedger {
  private readonly table: SlotTable<string>;
  /** Per worker: its open connections (released all at once when the worker dies). */
  private readonly byWorker = new Map<number, Set<number>>();

  constructor(limits: SlotLimits) {
    this.table = new SlotTable(limits);
  }

  /**
   * Counts a new connection: the connections to close to make room for it (the oldest not yet proven, on
   * whichever worker), or null when it is over a cap of proven ones (not counted; its worker closes it).
   */
  acquire(worker: number, conn: number, group: string): LedgerEntry[] | null {
    const evicted = this.table.admit(key(worker, conn), group);
    if (evicted === null) return null;
    const entries = evicted.map(entryOf);
    for (const entry of entries) this.byWorker.get(entry.worker)?.delete(entry.conn);
    let conns = this.byWorker.get(worker);
    if (!conns) {
      conns = new Set();
      this.byWorker.set(worker, conns);
    }
    conns.add(conn);
    return entries;
  }

  /** The connection proved who it is: never closed for a newcomer. */
  prove(worker: number, conn: number): void {
    this.table.prove(key(worker, conn));
  }

  release(worker: number, conn: number): void {
    if (!this.byWorker.get(worker)?.delete(conn)) return;
    this.table.release(key(worker, conn));
  }

  /** A worker exited: its connections went with it. */
  releaseWorker(worker: number): void {
    for (const conn of this.byWorker.get(worker) ?? []) this.table.release(key(worker, conn));
    this.byWorker.delete(worker);
  }

  get open(): number {
    return this.table.size;
  }
}

const key = (worker: number, conn: number) => `${worker}:${conn}`;

function entryOf(text: string): LedgerEntry {
  const colon = text.indexOf(':');
  return { worker: Number(text.slice(0, colon)), conn: Number(text.slice(colon + 1)) };
}
