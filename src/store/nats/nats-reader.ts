// Reads records back from the stream: the last N (windows walked backwards, filtered by subject where the
// filter allows), follow (an ordered consumer that survives node restarts) and scan(since).
import {
  AckPolicy,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { filterEndsAt, ORDER_SLACK_MS, recordMatcher } from '../record-filter.js';
import { lineReceivedAt } from '../record-head.js';
import { parseStoredRecord } from '../record-shape.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { RecordCursor, RecordLine, RecordReader } from '../store.js';
import { recordFilterSubject } from './names.js';

export interface NatsReaderOptions {
  /** Resolves once NATS is reachable (rejects UNAVAILABLE otherwise). */
  clients: () => Promise<{ js: JetStreamClient; jsm: JetStreamManager }>;
  stream: string;
  /** Counts and reports messages that are not stored records (anyone with publish rights can add them). */
  skipped?: SkippedRecords;
}

/** Records of the first window read back (each next one is twice the last). */
const FIRST_WINDOW = 512;
const BATCH = 1000;

export function createNatsReader(options: NatsReaderOptions): RecordReader {
  /** The message as a record line, or null for anything else (someone else published here): skipped. */
  function toLine(msg: JsMsg): RecordLine | null {
    const line = msg.string();
    const record = parseStoredRecord(line);
    if (record === null) {
      options.skipped?.note(`${options.stream} sequence ${msg.seq}`);
      return null;
    }
    return { line, record };
  }

  /**
   * Visits the messages of `subject` from a start (sequence or time) up to `lastSeq` through a short-lived
   * pull consumer: its num_pending says how many to fetch, so nothing waits for messages that never come.
   */
  async function readRange(
    subject: string,
    start: { seq: number } | { time: number },
    lastSeq: number,
    visit: (msg: JsMsg) => unknown,
    signal?: AbortSignal,
  ): Promise<void> {
    const { js, jsm } = await options.clients();
    const info = await jsm.consumers.add(options.stream, {
      ack_policy: AckPolicy.None,
      filter_subject: subject,
      inactive_threshold: nanos(60_000),
      mem_storage: true,
      num_replicas: 1,
      ...('seq' in start
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, start.seq) }
        : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(start.time).toISOString() }),
    });
    try {
      let left = info.num_pending;
      const consumer = await js.consumers.get(options.stream, info.name);
      while (left > 0 && !signal?.aborted) {
        const batch = await consumer.fetch({ max_messages: Math.min(left, BATCH), expires: 5000 });
        let got = 0;
        let done = false;
        for await (const msg of batch) {
          // Aborted: the fetch ends here (its consumer is deleted below), not after the batch.
          if (signal?.aborted) break;
          got++;
          if (msg.seq > lastSeq) done = true;
          else {
            const pending = visit(msg);
            if (pending instanceof Promise) await pending;
          }
        }
        left -= got;
        if (done || got === 0 || signal?.aborted) break;
      }
    } finally {
      await jsm.consumers.delete(options.stream, info.name).catch(() => {});
    }
  }

  /**
   * The sequence of the first record received after `time` among `first`..`last` (last + 1 when none is), by
   * halving: records are stored nearly in received_at order (the slack in `time` covers the rest), migrated ones
   * too when copied before any collector wrote (not by stream time: a copy's is the copy's). Records copied
   * after newer ones break that order, and a window ending before those may miss them (store migrate's manual
   * says so). A sequence without a record (gone, another publisher's) counts as before `time`: the search errs
   * towards reading more.
   */
  async function firstSeqAfter(time: number, first: number, last: number, signal?: AbortSignal) {
    const { jsm } = await options.clients();
    let lo = first;
    let hi = last + 1;
    while (lo < hi) {
      signal?.throwIfAborted();
      const mid = lo + Math.floor((hi - lo) / 2);
      const msg = await jsm.streams.getMessage(options.stream, { seq: mid }).catch(() => null);
      const at = msg ? lineReceivedAt(Buffer.from(msg.data.subarray(0, 256)).toString('utf8')) : Number.NaN;
      if (at > time) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  async function lastSeq(): Promise<{ first: number; last: number }> {
    const { jsm } = await options.clients();
    const info = await jsm.streams.info(options.stream);
    return { first: info.state.first_seq, last: info.state.last_seq };
  }

  return {
    skippedCount: () => options.skipped?.count ?? 0,

    async readRecent({ limit, filter, match, signal, maxBytes, maxRecords, window }) {
      signal?.throwIfAborted();
      const { first, last } = await lastSeq();
      const cursor: RecordCursor = { backend: 'nats', seq: last };
      if (limit <= 0 || last === 0) return { records: [], cursor };
      const subject = recordFilterSubject(filter?.endpoint, filter?.sensor);
      const matches = recordMatcher(filter, match);
      const found: RecordLine[] = [];
      let end = last;
      // Records after the window's end are not read: they never count against the bound.
      const windowEnd = filterEndsAt(filter);
      if (windowEnd < Date.now()) end = (await firstSeqAfter(windowEnd, first, last, signal)) - 1;
      let size = Math.max(FIRST_WINDOW, limit);
      let budget = maxBytes ?? Number.POSITIVE_INFINITY;
      const recordCap = maxRecords ?? Number.POSITIVE_INFINITY;
      let bounded = false;
      let read = 0;
      let bytesRead = 0;
      // Walk back window by window (each twice the last) until enough matches or the stream's start.
      while (found.length < limit && end >= first && budget > 0) {
        // A window is read oldest first, so one cut short by the byte budget is dropped whole: sized from the
        // records read so far, the windows end near the budget instead of past it.
        if (read > 0 && Number.isFinite(budget)) {
          size = Math.min(size, Math.max(1, Math.ceil(budget / (bytesRead / read))));
        }
        if (Number.isFinite(recordCap)) size = Math.min(size, Math.max(1, recordCap - read));
        const from = Math.max(first, end - size + 1);
        const need = limit - found.length;
        const chunk: RecordLine[] = [];
        let oldestReceived = Number.POSITIVE_INFINITY;
        const stop = new AbortController();
        const windowSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
        await readRange(
          subject,
          { seq: from },
          end,
          (msg) => {
            read++;
            bytesRead += msg.data.length;
            budget -= msg.data.length;
            if (budget < 0 || read > recordCap) stop.abort();
            const line = toLine(msg);
            if (!line) return;
            oldestReceived = Math.min(oldestReceived, Date.parse(line.record.received_at));
            if (matches(line.record)) {
              chunk.push(line);
              // A window may be large: it keeps only the newest of what it still needs, not all it matched.
              if (chunk.length >= 2 * need) chunk.splice(0, chunk.length - need);
            }
          },
          windowSignal,
        );
        signal?.throwIfAborted();
        // A window cut by the bound is given up: a caller summing what match saw drops it too.
        window?.(!stop.signal.aborted);
        if (stop.signal.aborted) {
          bounded = true;
          break;
        }
        found.unshift(...chunk);
        if (filter?.since !== undefined && oldestReceived < filter.since - ORDER_SLACK_MS) break;
        if ((read >= recordCap || budget <= 0) && from > first) {
          bounded = true;
          break;
        }
        end = from - 1;
        size *= 2;
      }
      return { records: found.slice(-limit), cursor, bounded: bounded && found.length < limit };
    },

    async follow(from, { onRecords, signal, filter, match }) {
      let next = (typeof from.seq === 'number' ? from.seq : 0) + 1;
      const subject = recordFilterSubject(filter?.endpoint, filter?.sensor);
      const matches = recordMatcher(filter, match);
      while (!signal.aborted) {
        try {
          const { js } = await options.clients();
          const consumer = await js.consumers.get(options.stream, {
            filter_subjects: subject,
            deliver_policy: DeliverPolicy.StartSequence,
            opt_start_seq: next,
          });
          const messages = await consumer.consume({ max_messages: BATCH });
          const abort = () => void messages.close();
          signal.addEventListener('abort', abort, { once: true });
          let batch: RecordLine[] = [];
          try {
            for await (const msg of messages) {
              next = msg.seq + 1;
              const line = toLine(msg);
              if (line && matches(line.record)) batch.push(line);
              if (batch.length > 0 && (msg.info.pending === 0 || batch.length >= BATCH)) {
                const out = batch;
                batch = [];
                await onRecords(out);
              }
            }
          } finally {
            signal.removeEventListener('abort', abort);
            if (batch.length > 0 && !signal.aborted) await onRecords(batch);
          }
        } catch {
          // NATS unreachable or the consumer lost: start again from the next sequence below.
        }
        if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 500));
      }
    },

    async scan(since, visit, signal) {
      const { last } = await lastSeq();
      if (last === 0) return;
      await readRange(
        recordFilterSubject(),
        { time: since - ORDER_SLACK_MS },
        last,
        (msg) => {
          const line = toLine(msg);
          if (line && Date.parse(line.record.received_at) >= since) return visit(line.record);
        },
        signal,
      );
    },
  };
}
