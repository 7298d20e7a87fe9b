// One output's feed on NATS: batches pulled from its durable consumer, every message acknowledged (the batch's
// acknowledgement confirmed) once the receiver took them. Collectors sharing the output pull from the same consumer, so each
// batch goes to one of them; a collector's death leaves its batch unacknowledged, redelivered after ack_wait.
import type { Logger } from 'pino';
import { ThreatcolError } from '../../errors.js';
import { outputLineOf } from '../output-line.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { OutputBatch, OutputFeed, OutputLine, RecordHead } from '../store.js';
import { ConsumerGoneError, type OutputPuller, type PulledMsg } from './output-pull.js';

export interface NatsOutputFeedOptions {
  name: string;
  match?: (record: RecordHead) => boolean;
  /** How much of each message is checked (OutputFeedOptions). */
  check: 'record' | 'head';
  /** A puller on the output's consumer, which exists (made again when it was deleted). */
  puller: () => Promise<OutputPuller>;
  /** The consumer was found gone: the next puller() makes it again. */
  consumerGone: () => void;
  /** The feed is closed: its puller's subscription can go. */
  dispose: () => void;
  /**
   * Before each pull: counts records retention removed ahead of the consumer (JetStream skips them silently).
   * Gets the highest stream sequence this feed was handed so far.
   */
  beforePull: (seenThrough: number) => Promise<void>;
  /** After a batch's acks were confirmed: remembers its last record (for `outputs list`). */
  onAcked: (last: OutputLine, seq: number) => Promise<void>;
  /** The consumer's ack_wait: a held batch is marked in progress three times within it. */
  ackWaitMs: number;
  /** How long one confirmation may take. */
  ackTimeoutMs: number;
  /** Told each failed attempt to pull (with the error) and the first that works after them (null). */
  onTrouble?: (error: Error | null) => void;
  logger: Logger;
  /** Counts the messages that are not stored records (skipped: acked, never handed over). */
  skipped?: SkippedRecords;
}

/** How long one pull waits for a first record; then it is asked again (a lost request costs at most this). */
const FIRST_WAIT_MS = 10_000;
const RETRY_MS = 1000;
/** Failed pulls are tried again after RETRY_MS, doubling up to this (half of each wait random). */
const RETRY_CAP_MS = 30_000;
const NOTE_WAIT_MS = 1000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The wait after `failures` failed pulls in a row: RETRY_MS doubling up to RETRY_CAP_MS, half of it random. */
function retryWait(failures: number): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_MS * 2 ** Math.min(failures, 30));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** The promise's value, or null as soon as `signal` aborts (NATS down must not hold a shutdown for its timeout). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A message's body as a Buffer over the same bytes (no copy). */
function bytesOf(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** A pulled message with its line, read once when sorted. */
interface KeptMsg {
  msg: PulledMsg;
  line: OutputLine;
}

interface Held {
  puller: OutputPuller;
  msgs: readonly PulledMsg[];
  records: OutputLine[];
  timer: NodeJS.Timeout;
  /** Its acknowledgement failed: handed back and pulled again (through a puller made anew if need be). */
  ackFailed: boolean;
}

export function createNatsOutputFeed(options: NatsOutputFeedOptions): OutputFeed {
  const { name, logger } = options;
  let held: Held | null = null;
  let closed = false;
  let seenThrough = 0;
  /** Pulls failed in a row (NATS unreachable, the consumer not made yet): the wait before the next grows. */
  let failures = 0;

  /** Stops marking a batch in progress; `handBack` naks it so it is delivered again at once. */
  function release(handBack: boolean): void {
    if (!held) return;
    clearInterval(held.timer);
    if (handBack) for (const msg of held.msgs) held.puller.nak(msg);
    held = null;
  }

  /** The leading messages whose bodies fit in `room` bytes; the others are handed back for redelivery. */
  function fit(puller: OutputPuller, msgs: PulledMsg[], room: number): PulledMsg[] {
    let used = 0;
    let count = 0;
    while (count < msgs.length && used + (msgs[count] as PulledMsg).data.length <= room) {
      used += (msgs[count] as PulledMsg).data.length;
      count++;
    }
    for (const msg of msgs.slice(count)) puller.nak(msg);
    return msgs.slice(0, count);
  }

  /**
   * Sorts pulled messages into `kept`: non-records and non-matching ones are acked as they pass.
   */
  function sort(puller: OutputPuller, msgs: PulledMsg[], kept: KeptMsg[]): void {
    for (const msg of msgs) {
      const data = bytesOf(msg.data);
      const line = outputLineOf(data, 0, data.length, options.check);
      if (!line) {
        // Counted each time, logged at most once a minute (skipped-records.ts): another publisher can be busy.
        options.skipped?.note(`output ${name}: stream sequence ${msg.seq}`);
        puller.ack(msg);
      } else if (options.match && !options.match(line.head)) {
        puller.ack(msg);
      } else {
        kept.push({ msg, line });
      }
    }
  }

  /** The kept messages as the batch this feed holds (marked in progress) until it is acked or handed back. */
  function hold(puller: OutputPuller, kept: KeptMsg[]): OutputBatch {
    // Redeliveries (a nak, an expired ack_wait) can arrive behind newer records: a batch is in store order.
    kept.sort((x, y) => x.msg.seq - y.msg.seq);
    const msgs = kept.map((k) => k.msg);
    const timer = setInterval(
      () => {
        for (const msg of msgs) puller.working(msg);
      },
      Math.max(100, Math.floor(options.ackWaitMs / 3)),
    );
    timer.unref();
    held = { puller, msgs, records: kept.map((k) => k.line), timer, ackFailed: false };
    return batchOf(held);
  }

  /** The held batch as next() hands it over (again, when it was not acknowledged). */
  function batchOf(mine: Held): OutputBatch {
    const { puller, msgs, records } = mine;
    let acked: Promise<void> | null = null;
    return {
      records,
      ack() {
        acked ??= (async () => {
          try {
            await puller.ackBatch(msgs, options.ackTimeoutMs);
          } catch (error) {
            acked = null; // may be tried again; next() hands the batch back and pulls again instead
            mine.ackFailed = true;
            throw new ThreatcolError(
              'UNAVAILABLE',
              `output ${name}: NATS did not confirm the acknowledgement: ${(error as Error).message}`,
              { cause: error },
            );
          }
          if (held === mine) release(false);
          const last = msgs.at(-1) as PulledMsg;
          const noted = options.onAcked(records.at(-1) as OutputLine, last.seq).catch((error: Error) => {
            logger.warn({ output: name, err: error.message }, 'cannot record the last acknowledged record');
          });
          // The position moved with the acks; the last id is for `outputs list`. Waited for briefly (so a list
          // right after shows it), never for a whole bucket failover.
          await Promise.race([noted, new Promise((resolve) => setTimeout(resolve, NOTE_WAIT_MS).unref())]);
        })();
        return acked;
      },
    };
  }

  /**
   * Pulls behind the first message until the batch holds maxRecords records or maxBytes, or waitMs passed. The
   * records the filter passes take no room: a filtered output gets full batches like any other, not batches
   * thinned by what it does not forward (an alert output on a busy stream would send one record at a time).
   */
  async function fill(
    puller: OutputPuller,
    head: PulledMsg,
    kept: KeptMsg[],
    limits: { maxRecords: number; maxBytes: number; waitMs: number; signal: AbortSignal },
  ): Promise<void> {
    // The server counts subjects and headers too: ask for the room scaled by the first message's overhead,
    // then hand back (in order) what does not fit in line bytes.
    const scale = (head.data.length + head.overhead) / Math.max(1, head.data.length);
    const until = Date.now() + Math.max(0, limits.waitMs);
    // The head always fits (one record larger than maxBytes still goes, alone); what is kept counts.
    let used = 0;
    for (const k of kept) used += k.msg.data.length;
    let first = true;
    for (;;) {
      const want = limits.maxRecords - kept.length;
      const room = limits.maxBytes - used;
      if (want <= 0 || room <= 0 || limits.signal.aborted) return;
      let more: PulledMsg[];
      try {
        more = await puller.pull({
          batch: want,
          maxBytes: Math.ceil(room * scale),
          expiresMs: first ? Math.max(0, limits.waitMs) : Math.max(0, until - Date.now()),
          signal: limits.signal,
        });
      } catch (error) {
        // The first pull's failure is next()'s to handle; a later one ends the filling: what is kept goes.
        if (first) {
          for (const k of kept) puller.nak(k.msg);
          throw error;
        }
        return;
      }
      first = false;
      const fitting = fit(puller, more, room);
      if (fitting.length > 0) seenThrough = Math.max(seenThrough, (fitting.at(-1) as PulledMsg).seq);
      const before = kept.length;
      sort(puller, fitting, kept);
      for (const k of kept.slice(before)) used += k.msg.data.length;
      // A short answer means the stream is drained or waitMs is over; one cut for room, that the batch is full
      // in bytes; a full one the filter thinned asks again.
      if (more.length < want || fitting.length < more.length || kept.length === 0) return;
    }
  }

  const empty: OutputBatch = { records: [], ack: async () => {} };

  /** The leading kept messages within these limits (the first always); the rest handed back. */
  function within(puller: OutputPuller, kept: KeptMsg[], maxRecords: number, maxBytes: number): KeptMsg[] {
    let bytes = 0;
    let count = 0;
    while (count < kept.length) {
      const size = (kept[count] as KeptMsg).msg.data.length;
      if (count > 0 && (count >= maxRecords || bytes + size > maxBytes)) break;
      bytes += size;
      count++;
    }
    for (const k of kept.slice(count)) puller.nak(k.msg);
    return kept.slice(0, count);
  }

  return {
    async next({ maxRecords, maxBytes, waitMs, signal }) {
      // A batch not acknowledged (its receiver failed) is kept, first in the next one, filled up to these limits
      // as a new one would be. Handed back (nak) and pulled again, its records could come behind newer ones: the
      // server may answer the pull before it has taken the naks (seen in a fresh clone's run: b0, b2 for b0, b1).
      if (held !== null && !held.ackFailed) {
        const again = held;
        clearInterval(again.timer);
        held = null;
        const kept = within(
          again.puller,
          again.msgs.map((msg, i) => ({ msg, line: again.records[i] as OutputLine })),
          maxRecords,
          maxBytes,
        );
        try {
          await fill(again.puller, (kept[0] as KeptMsg).msg, kept, { maxRecords, maxBytes, waitMs, signal });
          return hold(again.puller, kept);
        } catch {
          // fill handed them back: pulled again below.
        }
      }
      // One whose acknowledgement failed goes back (nak), and the next is pulled through a puller made anew.
      release(true);
      while (!signal.aborted && !closed) {
        try {
          const puller = await unlessAborted(
            options.puller().then(async (p) => {
              await options.beforePull(seenThrough);
              return p;
            }),
            signal,
          );
          if (!puller) break;
          const asked = Date.now();
          const first = await puller.pull({ batch: 1, expiresMs: FIRST_WAIT_MS, signal });
          if (failures > 0) {
            failures = 0;
            options.onTrouble?.(null);
          }
          const head = first[0];
          if (!head) {
            // Ended early without a record (a leader change, too many waiting requests): not at full speed.
            if (Date.now() - asked < RETRY_MS) await sleep(RETRY_MS / 4, signal);
            continue;
          }
          const kept: KeptMsg[] = [];
          seenThrough = Math.max(seenThrough, head.seq);
          sort(puller, [head], kept);
          await fill(puller, head, kept, { maxRecords, maxBytes, waitMs, signal });
          if (kept.length > 0) return hold(puller, kept);
        } catch (error) {
          if (error instanceof ConsumerGoneError) {
            // A replay made the next generation (or `outputs forget` deleted it): taken up at the next pull.
            options.consumerGone();
            if (signal.aborted) break;
            logger.debug(
              { output: name, err: (error as Error).message },
              'output consumer gone; pulling again',
            );
            await sleep(RETRY_MS, signal);
            continue;
          }
          if (signal.aborted) break;
          const message = (error as Error).message;
          const waitMs = retryWait(failures++);
          // Said once a streak (and by the output's status, through onTrouble), not at every attempt.
          logger[failures === 1 ? 'warn' : 'debug'](
            { output: name, err: message, retryInMs: waitMs },
            'cannot read the output from NATS; retrying',
          );
          options.onTrouble?.(new Error(`cannot read the records from NATS: ${message}`));
          await sleep(waitMs, signal);
        }
      }
      return empty;
    },
    async close() {
      closed = true;
      release(true);
      options.dispose();
    },
  };
}
