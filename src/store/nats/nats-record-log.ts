// The NATS record writer: every record of a request (and of every concurrent request) published at once
// through the pipeline, each with its own Nats-Msg-Id; a request resolves only when all its records are acked.
import type { Logger } from 'pino';
import type { ThreatcolError } from '../../errors.js';
import { storedLine } from '../../records/stored-line.js';
import type { StoredRecord } from '../../records/stored-record.js';
import type { AppendOptions, AppendResult, RecordLog } from '../store.js';
import { recordSubject } from './names.js';
import type { NatsLink } from './nats-link.js';
import { SENDER_RETRY_S } from './nats-setup.js';
import type { AckTarget, PublishPipeline } from './publish-pipeline.js';
import { UncertainRequests } from './uncertain-requests.js';

export interface NatsRecordLogOptions {
  link: NatsLink;
  /** The publisher while connected, else null (never buffered through a reconnect). */
  publisher: () => PublishPipeline | null;
  /** The record stored at a sequence: the first delivery of a duplicate. */
  firstDelivery: (seq: number) => Promise<StoredRecord>;
  publishTimeoutMs: number;
  /** Dedupe keys are used only when the window is on; record ids are always used for retries. */
  dedupe: boolean;
  logger: Logger;
  now?: () => number;
  /** After each append's publish acks: its record count and how long the acks took (metrics). */
  onBatchSynced?: (records: number, seconds: number) => void;
}

/** Requests in doubt remembered at most (a few MB of ids: an outage must not grow memory without end). */
const UNCERTAIN_MAX = 10_000;

/** Retries wait this long: enough for a reconnect or a stream leader election to make progress. */
const RETRY_DELAY_MS = 150;

interface BatchContext {
  publisher: () => PublishPipeline | null;
  firstDelivery: (seq: number) => Promise<StoredRecord>;
  unavailable: (detail: string) => ThreatcolError;
  now: () => number;
  /** One attempt may not use the whole budget: an ack lost with a dying node must leave time to retry. */
  attemptMs: number;
}

/**
 * One append: all records published at once, answered when the last is acknowledged (200) or at the first
 * record that cannot be (503: the sender retries the whole request). Every attempt of a record carries the same
 * Nats-Msg-Id (its dedupe key, else its record id, or those of an uncertain earlier attempt of the request), so
 * a retry after a lost ack, ours or the sender's, is answered "duplicate" with the first sequence.
 * It keeps what a retry needs, not the records: the lines in one buffer, the ids, the subjects. With replicas
 * 3 a record waits about a second for its ack, and every object held that long is copied by the young
 * generation's collections and then promoted.
 */
class Batch implements AckTarget {
  readonly result: Promise<AppendResult>;
  /** Each record's own id; the answer's ids start as these (a duplicate's becomes the first delivery's). */
  private readonly recordIds: string[];
  /** Per record: the Nats-Msg-Id of every attempt. */
  readonly msgIds: readonly string[];
  /** Per record: handed to a connection and not acknowledged yet (it may be stored without our knowing). */
  private readonly onWire: Uint8Array;
  /** A record was acknowledged (stored, or there already): a failure after it leaves that record in the stream. */
  private acknowledged = false;
  private readonly ids: string[];
  private readonly subjects: string[];
  /** The records' lines, one after another; record i's ends at ends[i]. */
  private readonly lines: Buffer;
  private readonly ends: Uint32Array;
  private duplicates = 0;
  private left: number;
  private settled = false;
  private lastError = 'no answer';
  private retries: number[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private resolve!: (result: AppendResult) => void;
  private reject!: (error: Error) => void;

  constructor(
    private readonly ctx: BatchContext,
    records: StoredRecord[],
    /** Per record: the dedupe key (also its message id), or null to use the record id. */
    keys: readonly (string | null)[] | null,
    /** The message ids of an earlier attempt of this request answered 503 in doubt (UncertainRequests). */
    earlier: readonly string[] | null,
    private readonly deadline: number,
  ) {
    const n = records.length;
    this.recordIds = new Array(n);
    this.subjects = new Array(n);
    this.ends = new Uint32Array(n);
    const texts: string[] = new Array(n);
    let bytes = 0;
    let subject = '';
    let endpoint = '';
    let sensor = '';
    for (let i = 0; i < n; i++) {
      const record = records[i] as StoredRecord;
      this.recordIds[i] = record.id;
      if (i === 0 || record.endpoint !== endpoint || record.sensor !== sensor) {
        endpoint = record.endpoint;
        sensor = record.sensor;
        subject = recordSubject(record.endpoint, record.sensor);
      }
      this.subjects[i] = subject;
      const text = storedLine(record);
      texts[i] = text;
      bytes += Buffer.byteLength(text);
    }
    this.lines = Buffer.allocUnsafe(bytes);
    let at = 0;
    for (let i = 0; i < n; i++) {
      at += this.lines.write(texts[i] as string, at);
      this.ends[i] = at;
    }
    this.ids = this.recordIds.slice();
    this.msgIds = earlier ?? this.recordIds.map((id, i) => keys?.[i] ?? id);
    this.onWire = new Uint8Array(n);
    this.left = n;
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    for (let i = 0; i < n && !this.settled; i++) this.publish(i);
  }

  /**
   * After a failure: whether a record of the request may be in the stream all the same, acknowledged before the
   * failure or on the wire at it (JetStream stores each message alone: what it acknowledged stays).
   */
  get inDoubt(): boolean {
    return this.acknowledged || this.onWire.includes(1);
  }

  acked(index: number, seq: number, duplicate: boolean): void {
    if (this.settled) return;
    this.onWire[index] = 0;
    this.acknowledged = true;
    const own = this.recordIds[index] as string;
    if (!duplicate) {
      this.stored(index, own, false);
      return;
    }
    // Our own retry of a record whose ack was lost (the stored one is this record), or the record stored
    // earlier under the same key or by an earlier attempt of the request: answered with the stored id.
    this.ctx.firstDelivery(seq).then(
      (first) => this.stored(index, first.id, first.id !== own),
      (error: Error) => this.fail(`cannot read the first delivery: ${error.message}`),
    );
  }

  failed(index: number, reason: string, transient: boolean): void {
    if (this.settled) return;
    // Refused, or no stream listened: not stored. A timeout or a lost link: it may have been.
    if (!transient || reason === 'no responders') this.onWire[index] = 0;
    this.lastError = reason;
    if (transient) this.retry(index);
    else this.fail(`NATS refused the record: ${reason}`);
  }

  private publish(index: number): void {
    if (this.settled) return;
    const left = this.deadline - this.ctx.now();
    if (left <= 0) {
      this.fail(`no acknowledgement from NATS in time (${this.lastError})`);
      return;
    }
    const pipeline = this.ctx.publisher();
    if (!pipeline) {
      this.retry(index);
      return;
    }
    this.onWire[index] = 1;
    pipeline.publish(
      this.subjects[index] as string,
      this.lines.subarray(index === 0 ? 0 : this.ends[index - 1], this.ends[index]),
      this.msgIds[index] as string,
      Math.min(left, this.ctx.attemptMs),
      this,
      index,
    );
  }

  /** Records to publish again after a pause, all of this batch's on one timer. */
  private retry(index: number): void {
    this.retries.push(index);
    if (this.retryTimer !== null) return;
    const wait = Math.min(RETRY_DELAY_MS, Math.max(0, this.deadline - this.ctx.now()));
    this.retryTimer = setTimeout(() => {
      const again = this.retries;
      this.retries = [];
      this.retryTimer = null;
      for (const i of again) this.publish(i);
    }, wait);
  }

  private stored(index: number, id: string, duplicate: boolean): void {
    if (this.settled) return;
    this.ids[index] = id;
    if (duplicate) this.duplicates++;
    if (--this.left > 0) return;
    this.settled = true;
    this.resolve({ ids: this.ids, duplicates: this.duplicates });
  }

  private fail(detail: string): void {
    if (this.settled) return;
    this.settled = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.reject(this.ctx.unavailable(detail));
  }
}

export function createNatsRecordLog(options: NatsRecordLogOptions): RecordLog {
  const now = options.now ?? Date.now;
  let queued = 0;
  let closed = false;
  const inFlight = new Set<Promise<unknown>>();
  let lastErrorLog = 0;
  const uncertain = new UncertainRequests(
    options.publishTimeoutMs + SENDER_RETRY_S * 1000,
    UNCERTAIN_MAX,
    now,
  );
  const ctx: BatchContext = {
    publisher: options.publisher,
    firstDelivery: options.firstDelivery,
    unavailable: (detail) => options.link.unavailable(detail),
    now,
    attemptMs: Math.max(1000, Math.floor(options.publishTimeoutMs / 3)),
  };

  function logFailure(message: string): void {
    const t = now();
    if (t - lastErrorLog < 10_000) return;
    lastErrorLog = t;
    options.logger.error({ reason: message }, 'NATS did not acknowledge records; answering 503');
  }

  return {
    async append(records: StoredRecord[], appendOptions?: AppendOptions): Promise<AppendResult> {
      if (closed) throw options.link.unavailable('the record store is closed');
      if (records.length === 0) return { ids: [], duplicates: 0 };
      // A long outage answers at once instead of holding every request for the whole timeout.
      if (options.link.downForMs() > options.publishTimeoutMs) {
        logFailure(options.link.reason());
        throw options.link.unavailable();
      }
      const keys = options.dedupe ? (appendOptions?.dedupeKeys ?? null) : null;
      queued += records.length;
      const started = performance.now();
      const earlier = uncertain.idsFor(records);
      const batch = new Batch(ctx, records, keys, earlier, now() + options.publishTimeoutMs);
      const work = batch.result;
      inFlight.add(work);
      try {
        const result = await work;
        if (earlier) uncertain.forget(records);
        options.onBatchSynced?.(records.length, (performance.now() - started) / 1000);
        return result;
      } catch (error) {
        logFailure((error as Error).message);
        // The 503 must not make the sender's retry a second copy of what is or may be in the stream already.
        if (batch.inDoubt) uncertain.remember(records, batch.msgIds);
        throw error;
      } finally {
        queued -= records.length;
        inFlight.delete(work);
      }
    },
    get queuedRecords() {
      return queued;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...inFlight]);
    },
  };
}
