// Requests answered 503 with records of theirs in the stream, or maybe (acknowledged before another record
// failed, or on the wire when the link dropped or the publish timeout ended): their message ids, kept by the
// request's content, so that the sender's retry publishes under the same ids and JetStream stores each once.
import { createHash } from 'node:crypto';
import type { StoredRecord } from '../../records/stored-record.js';

/** What the sender sent: sensor, endpoint and every record as received, in order (not our ids or times). */
export function requestDigest(records: readonly StoredRecord[]): string {
  const hash = createHash('sha256');
  for (const r of records) hash.update(`${r.sensor}\0${r.endpoint}\0${JSON.stringify(r.original)}\n`);
  return hash.digest('base64url');
}

export class UncertainRequests {
  /** In insertion order, so the oldest goes first when full. */
  private readonly entries = new Map<string, { msgIds: readonly string[]; until: number }>();

  constructor(
    /** How long a retry is recognised: no longer than the stream's duplicate window dedupes. */
    private readonly ttlMs: number,
    /** A bound on memory whatever the outage: past it the oldest are forgotten. */
    private readonly max: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  remember(records: readonly StoredRecord[], msgIds: readonly string[]): void {
    const digest = requestDigest(records);
    this.entries.delete(digest);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(digest, { msgIds, until: this.now() + this.ttlMs });
  }

  /** A retry was answered: the doubt is settled, a later identical request is a new delivery. */
  forget(records: readonly StoredRecord[]): void {
    this.entries.delete(requestDigest(records));
  }

  /** The message ids of an uncertain earlier attempt of this very request, else null. */
  idsFor(records: readonly StoredRecord[]): readonly string[] | null {
    // The common case costs nothing: no digest while no 503 is in doubt.
    if (this.entries.size === 0) return null;
    const now = this.now();
    for (const [digest, entry] of this.entries) {
      if (entry.until > now) break;
      this.entries.delete(digest);
    }
    const entry = this.entries.get(requestDigest(records));
    return entry && entry.until > now && entry.msgIds.length === records.length ? entry.msgIds : null;
  }
}
