// The primary's count of open connections by address group and in all, across workers, so
// `server.maxConnectionsPerAddress` and `server.maxConnections` hold for the daemon, not per worker.

export class ConnectionLedger {
  private readonly byGroup = new Map<string, number>();
  /** Per worker: its open connections and their groups (released all at once when the worker dies). */
  private readonly byWorker = new Map<number, Map<number, string>>();
  private total = 0;

  constructor(
    private readonly perAddress: number,
    private readonly max: number,
  ) {}

  /** Counts a new connection; false (and not counted) when it is over a cap. */
  acquire(worker: number, conn: number, group: string): boolean {
    const count = this.byGroup.get(group) ?? 0;
    if (count >= this.perAddress || this.total >= this.max) return false;
    this.byGroup.set(group, count + 1);
    this.total += 1;
    let conns = this.byWorker.get(worker);
    if (!conns) {
      conns = new Map();
      this.byWorker.set(worker, conns);
    }
    conns.set(conn, group);
    return true;
  }

  release(worker: number, conn: number): void {
    const conns = this.byWorker.get(worker);
    const group = conns?.get(conn);
    if (group === undefined) return;
    conns?.delete(conn);
    this.drop(group);
  }

  /** A worker exited: its connections went with it. */
  releaseWorker(worker: number): void {
    for (const group of this.byWorker.get(worker)?.values() ?? []) this.drop(group);
    this.byWorker.delete(worker);
  }

  get open(): number {
    return this.total;
  }

  private drop(group: string): void {
    this.total -= 1;
    const left = (this.byGroup.get(group) ?? 1) - 1;
    if (left <= 0) this.byGroup.delete(group);
    else this.byGroup.set(group, left);
  }
}
