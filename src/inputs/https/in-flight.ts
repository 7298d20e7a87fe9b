// The requests being answered, for a graceful stop. A doubly linked list, not a Set: a Set that every request
// adds to and deletes from keeps rehashing into new tables, and the dead old tables (already promoted by the
// garbage collector) still point to the new ones, so each young-generation GC copied and promoted about 2 MB
// of finished requests: 5x the GC time of the whole server under keep-alive load (docs/performance.md).
// An entry that leaves the list drops its links, so a finished request points to nothing that lives on.

export interface InFlightEntry<T> {
  readonly value: T;
  prev: InFlightEntry<T> | null;
  next: InFlightEntry<T> | null;
  listed: boolean;
}

export class InFlight<T> {
  private head: InFlightEntry<T> | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(value: T): InFlightEntry<T> {
    const entry: InFlightEntry<T> = { value, prev: null, next: this.head, listed: true };
    if (this.head) this.head.prev = entry;
    this.head = entry;
    this.count += 1;
    return entry;
  }

  delete(entry: InFlightEntry<T>): void {
    if (!entry.listed) return;
    entry.listed = false;
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    entry.prev = null;
    entry.next = null;
    this.count -= 1;
  }

  /** Every value listed now, newest first; the list may change while the caller works through them. */
  values(): T[] {
    const out: T[] = [];
    for (let e = this.head; e !== null; e = e.next) out.push(e.value);
    return out;
  }

  clear(): void {
    while (this.head) this.delete(this.head);
  }
}
