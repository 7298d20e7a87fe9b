// A worker's requests to the primary over IPC (rate-limit leases, dedupe claims): each numbered, its answer
// matched by number. Once the primary is gone, every open request and every later one gets the same answer.
export class IpcRequests<T> {
  private readonly open = new Map<number, (answer: T) => void>();
  private next = 0;
  private closedWith: { answer: T } | null = null;

  /** Numbers a request, hands the number to `send`, and resolves with the primary's answer to it. */
  ask(send: (req: number) => void): Promise<T> {
    if (this.closedWith) return Promise.resolve(this.closedWith.answer);
    const req = ++this.next;
    return new Promise<T>((resolve) => {
      this.open.set(req, resolve);
      send(req);
    });
  }

  answer(req: number, answer: T): void {
    const resolve = this.open.get(req);
    this.open.delete(req);
    resolve?.(answer);
  }

  /** The primary is gone: `answer` for every request open now and asked later. */
  close(answer: T): void {
    this.closedWith = { answer };
    for (const resolve of this.open.values()) resolve(answer);
    this.open.clear();
  }
}
