// The contract between an output's forwarder (src/outputs/) and one kind of receiver (a SIEM, a webhook, mail):
// the forwarder reads records from the store's durable cursor, a receiver only delivers a batch and says what
// the other side did with it. Receivers keep no buffer of their own: what they have not acknowledged is sent again.
import type { StoredRecord } from '../../records/stored-record.js';
import type { RecordHead } from '../../store/store.js';

/** One record as the forwarder hands it over: the stored line exactly as in the log, and its parsed form. */
export interface OutgoingRecord {
  /** The record id: the idempotency key every receiver is given (ES `_id`, `Idempotency-Key`, HEC/syslog field). */
  readonly id: string;
  /** The stored JSON line, without its newline. */
  readonly line: string;
  /**
   * The same line's bytes as stored, when the feed has them: a receiver sending the line as it is puts these in
   * its body (no decoding and encoding again).
   */
  readonly bytes?: Buffer;
  /** What an envelope reads (time, sensor, criticality): known without parsing the line (store/record-head.ts). */
  readonly head: RecordHead;
  /** The whole record: parsed at its first read, when the feed checked only the head. */
  readonly record: StoredRecord;
}

/** A record the receiver refused for good (HTTP 400-class per item, a mapping error): dead-lettered. */
export interface RefusedRecord {
  /** Index into the batch that was sent. */
  readonly index: number;
  /** The receiver's answer, short (status and reason; never a credential). */
  readonly answer: string;
}

/**
 * What became of a batch. `retry` lists records the receiver did not take this time (per-item 429/5xx): the
 * forwarder sends them again with backoff before the cursor moves. Everything not in `refused` or `retry` was
 * acknowledged.
 */
export interface DeliveryReport {
  readonly refused: readonly RefusedRecord[];
  readonly retry: readonly number[];
}

/** A whole batch failed and may succeed later (connection error, timeout, 429, 5xx): retried with backoff. */
export class TransientDeliveryError extends Error {
  readonly retryAfterMs: number | null;
  constructor(message: string, retryAfterMs: number | null = null) {
    super(message);
    this.name = 'TransientDeliveryError';
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The receiver refused our credentials (401/403 for the whole request, a token file missing): the output
 * pauses with this error and retries slowly; nothing is dead-lettered.
 */
export class AuthDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthDeliveryError';
  }
}

/** The rest of a group's window (an output's `group`, outputs/grouping.ts): one message, whatever the count. */
export interface GroupSummary {
  /** The group's identity in the output's state. */
  readonly key: string;
  /** The values of `group.by` that make the group; null for the records of groups past `maxGroups`. */
  readonly group: Readonly<Record<string, unknown>> | null;
  /** Records of the window after the group's first (sent on its own). */
  readonly count: number;
  /** `received_at` of the first and last of them. */
  readonly firstAt: string;
  readonly lastAt: string;
  readonly sensors: readonly string[];
  /** More sensors than `sensors` lists. */
  readonly moreSensors: boolean;
  /** Stored lines of the window's first records. */
  readonly samples: readonly string[];
  /** The configured window ("10m"). */
  readonly window: string;
}

export interface Receiver {
  /**
   * Delivers one batch (in store order). Resolves with what the receiver did per record; rejects with
   * TransientDeliveryError or AuthDeliveryError for the whole batch. Must honour `signal` (reload, stop).
   */
  send(batch: readonly OutgoingRecord[], signal: AbortSignal): Promise<DeliveryReport>;
  /** Releases sockets and timers. */
  close(): Promise<void>;
  /**
   * When the receiver will take the next batch (epoch ms), for receivers that pace themselves (email's
   * minIntervalMs): the forwarder reads the next batch only then, so it carries every record stored meanwhile.
   */
  readyAt?(): number;
  /**
   * Delivers group summaries (alert receivers: webhook, email). Resolves with what the receiver did per summary
   * (`refused` and `retry` index `summaries`); rejects like `send` for all of them.
   */
  sendSummaries?(summaries: readonly GroupSummary[], signal: AbortSignal): Promise<DeliveryReport>;
}

/**
 * When a receiver that paces itself (email) last sent, held by its output rather than by one receiver: a
 * rotated secret builds a new receiver, a reload a new forwarder, and neither may let a mail out early.
 */
export interface Pacing {
  lastSentAt: number;
}

/** Everything went through. */
export const DELIVERED: DeliveryReport = Object.freeze({ refused: [], retry: [] });
