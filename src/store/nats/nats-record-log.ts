// The NATS record writer: one JetStream publish per record, all of a request's publishes (and every
// concurrent request's) in flight at once; resolves only when every record is acknowledged.
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { StoredRecord } from '../../records/stored-record.js';
import type { AppendOptions, AppendResult, RecordLog } from '../store.js';
import { recordSubject } from './names.js';
import type { NatsLink } from './nats-link.js';

export interface NatsRecordLogOptions {
  link: NatsLink;
  /** The publisher while connected, else null (never buffered through a reconnect). */
  js: () => JetStreamClient | null;
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

/** Retries wait this long: enough for a reconnect or a stream leader election to make progress. */
const RETRY_DELAY_MS = 150;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createNatsRecordLog(options: NatsRecordLogOptions): RecordLog {
  const now = options.now ?? Date.now;
  let queued = 0;
  let closed = false;
  const inFlight = new Set<Promise<unknown>>();
  let lastErrorLog = 0;
  // One attempt may not use the whole budget: an ack lost with a dying node must leave time to retry.
  const attemptMs = Math.max(1000, Math.floor(options.publishTimeoutMs / 3));

  function logFailure(message: string): void {
    const t = now();
    if (t - lastErrorLog < 10_000) return;
    lastErrorLog = t;
    options.logger.error({ reason: message }, 'NATS did not acknowledge records; answering 503');
  }

  async function idAt(seq: number): Promise<string> {
    return (await options.firstDelivery(seq)).id;
  }

  /**
   * Publishes one record until acknowledged or the deadline. Every attempt carries the same Nats-Msg-Id,
   * so a retry after a lost ack is answered "duplicate" with the first sequence instead of stored twice.
   */
  async function publishOne(
    record: StoredRecord,
    line: string,
    key: string | null,
    deadline: number,
  ): Promise<{ id: string; duplicate: boolean }> {
    const msgID = key ?? record.id;
    const subject = recordSubject(record.endpoint, record.sensor);
    let lastError = 'no answer';
    for (;;) {
      const left = deadline - now();
      if (left <= 0) throw options.link.unavailable(`no acknowledgement from NATS in time (${lastError})`);
      const js = options.js();
      if (!js) {
        await delay(Math.min(RETRY_DELAY_MS, left));
        continue;
      }
      let ack: PubAck;
      try {
        ack = await js.publish(subject, line, { msgID, timeout: Math.min(left, attemptMs) });
      } catch (error) {
        lastError = (error as Error).message;
        if (!isTransient(error)) throw options.link.unavailable(`NATS refused the record: ${lastError}`);
        await delay(Math.min(RETRY_DELAY_MS, Math.max(0, deadline - now())));
        continue;
      }
      if (!ack.duplicate) return { id: record.id, duplicate: false };
      if (key === null) return { id: record.id, duplicate: false }; // our own retry, stored once
      const first = await idAt(ack.seq).catch((error: Error) => {
        throw options.link.unavailable(`cannot read the first delivery: ${error.message}`);
      });
      return { id: first, duplicate: first !== record.id };
    }
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
      const deadline = now() + options.publishTimeoutMs;
      const keys = appendOptions?.dedupeKeys;
      queued += records.length;
      const started = performance.now();
      const work = Promise.all(
        records.map((record, i) =>
          publishOne(record, JSON.stringify(record), options.dedupe ? (keys?.[i] ?? null) : null, deadline),
        ),
      );
      inFlight.add(work);
      try {
        const results = await work;
        options.onBatchSynced?.(records.length, (performance.now() - started) / 1000);
        return {
          ids: results.map((r) => r.id),
          duplicates: results.filter((r) => r.duplicate).length,
        };
      } catch (error) {
        logFailure((error as Error).message);
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

/** Worth retrying until the deadline: timeouts, no responders (leader election), lost connections. */
function isTransient(error: unknown): boolean {
  const e = error as { name?: string; message?: string; code?: string; api_error?: { code?: number } };
  if (e.api_error?.code === 503) return true;
  const text = `${e.name ?? ''} ${e.message ?? ''} ${e.code ?? ''}`;
  return /timeout|no responders|not enabled|disconnect|connection|closed|503|unavailable|no quorum|leader/i.test(
    text,
  );
}
