// The `splunk_hec` receiver: a batch is one POST to /services/collector/event (events concatenated, the stored
// record as `event`, the record id as the indexed field `threatcol_id`), on a channel of its own.
//
// When HEC answers with an `ackId` (indexer acknowledgement enabled on the token), the batch counts as delivered
// only once /services/collector/ack says so: polled every `ackPollIntervalMs` (Splunk's guidance: 10 s), and a
// batch still unacknowledged after `ackTimeoutMs` (5 min) is a transient failure, so the forwarder sends it
// again, with the same ids. Without an `ackId`, HEC's 200 is the acknowledgement (the event was valid and
// queued; Splunk documents that it can still be lost before indexing).
//
// Answers: 401/403 and the codes that mean the output's own settings are wrong (7 incorrect index, 10/11 the
// channel, 14 acknowledgement disabled, 16 query-string auth) pause the output; 400 with `invalid-event-number`
// refuses that event and asks for the others again (HEC may have indexed those before it: at-least-once);
// 400 without it refuses the batch; 429, 5xx, a redirect and anything else are transient, and so is an answer
// cut (over its cap, too slow): whether HEC took the events, and under which ackId, is unknown.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.js';
import {
  brief,
  classifyStatus,
  createHttpClient,
  describeAnswer,
  type HttpAnswer,
  type HttpReceiverOptions,
} from './http-post.js';
import {
  AuthDeliveryError,
  DELIVERED,
  type DeliveryReport,
  type OutgoingRecord,
  type Receiver,
  TransientDeliveryError,
} from './receiver.js';

export interface SplunkHecOptions extends HttpReceiverOptions {
  /** The HEC token, already read from its file; sent as `Authorization: Splunk <token>`, never logged. */
  token: string;
  /** null: the token's default index. */
  index: string | null;
  sourcetype: string;
  source: string;
  /** The events' `host`; null: HEC's default (the sender's address). */
  host: string | null;
  ackPollIntervalMs: number;
  ackTimeoutMs: number;
}

export interface SplunkHecDeps {
  logger: Logger;
  now?: () => number;
}

/** HEC answer codes that say the output is configured wrong: no event can get through until an operator acts. */
const SETTINGS_CODES = new Set([7, 10, 11, 14, 16]);

interface HecAnswer {
  text?: string;
  code?: number;
  ackId?: number;
  'invalid-event-number'?: number;
  acks?: Record<string, boolean>;
}

const parse = (text: string): HecAnswer => {
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
};

export function createSplunkHecReceiver(options: SplunkHecOptions, deps: SplunkHecDeps): Receiver {
  const now = deps.now ?? Date.now;
  const client = createHttpClient(options, 'splunk_hec');
  const base = new URL(options.url);
  const path = base.pathname.replace(/\/+$/, '');
  // Acknowledgement ids belong to a channel: one per receiver, so a restart starts a fresh one.
  const channel = randomUUID();
  const eventUrl = new URL(`${path}/services/collector/event`, base);
  const ackUrl = new URL(`${path}/services/collector/ack?channel=${channel}`, base);
  const headers = {
    authorization: `Splunk ${options.token}`,
    'x-splunk-request-channel': channel,
    'content-type': 'application/json',
  };
  const meta =
    `"sourcetype":${JSON.stringify(options.sourcetype)},"source":${JSON.stringify(options.source)}` +
    (options.index !== null ? `,"index":${JSON.stringify(options.index)}` : '') +
    (options.host !== null ? `,"host":${JSON.stringify(options.host)}` : '');

  const event = (entry: OutgoingRecord) => {
    const ms = Date.parse(entry.head.received_at);
    const time = Number.isFinite(ms) ? `"time":${(ms / 1000).toFixed(3)},` : '';
    return `{${time}${meta},"fields":{"threatcol_id":${JSON.stringify(entry.id)}},"event":${entry.line}}`;
  };

  const failure = (status: number, answer: HecAnswer, text: string) =>
    `splunk_hec ${base.origin}: ${status} code ${answer.code ?? '?'}: ${brief(answer.text ?? text)}`;

  /**
   * What an answer is before HEC's codes are read: 401/403 pause; a cut answer (its ackId or code unknown) and a
   * redirect (not followed) are transient. Null: a whole answer, for the caller to read.
   */
  const unreadable = (answer: HttpAnswer): Error | null => {
    const kind = classifyStatus(answer.status);
    if (kind === 'auth')
      return new AuthDeliveryError(failure(answer.status, parse(answer.text), answer.text));
    if (answer.cut !== null)
      return new TransientDeliveryError(
        `splunk_hec ${base.origin}: HTTP ${answer.status}: ${answer.cut}; the connection was dropped`,
        answer.retryAfterMs,
      );
    if (answer.status >= 300 && answer.status <= 399)
      return new TransientDeliveryError(`splunk_hec ${base.origin}: ${describeAnswer(answer)}`);
    return null;
  };

  const awaitAck = async (ackId: number, signal: AbortSignal): Promise<void> => {
    const deadline = now() + options.ackTimeoutMs;
    for (;;) {
      try {
        await sleep(options.ackPollIntervalMs, undefined, { signal });
      } catch {
        throw signal.reason;
      }
      const answer = await client.post(ackUrl, headers, JSON.stringify({ acks: [ackId] }), signal);
      const problem = unreadable(answer);
      if (problem !== null) throw problem;
      const parsed = parse(answer.text);
      if (answer.status === 200 && parsed.acks?.[String(ackId)] === true) return;
      if (answer.status === 400)
        // The channel or the acknowledgement is gone (HEC restarted, acks expired): the batch's fate is unknown.
        throw new TransientDeliveryError(failure(answer.status, parsed, answer.text));
      if (now() >= deadline)
        throw new TransientDeliveryError(
          `splunk_hec ${base.origin}: ackId ${ackId} not acknowledged within ${options.ackTimeoutMs} ms; sending again`,
        );
    }
  };

  return {
    async send(batch: readonly OutgoingRecord[], signal: AbortSignal): Promise<DeliveryReport> {
      signal.throwIfAborted();
      if (batch.length === 0) return DELIVERED;
      const body = batch.map(event).join('\n');
      const answer = await client.post(eventUrl, headers, body, signal);
      const problem = unreadable(answer);
      if (problem !== null) throw problem;
      const parsed = parse(answer.text);
      if (answer.status === 200) {
        if (typeof parsed.ackId === 'number') await awaitAck(parsed.ackId, signal);
        return DELIVERED;
      }
      const what = failure(answer.status, parsed, answer.text);
      if (answer.status === 401 || answer.status === 403 || SETTINGS_CODES.has(parsed.code ?? -1))
        throw new AuthDeliveryError(what);
      if (answer.status === 400) {
        const invalid = parsed['invalid-event-number'];
        if (typeof invalid === 'number' && invalid >= 0 && invalid < batch.length) {
          deps.logger.debug({ receiver: 'splunk_hec', invalid }, 'an event refused, the others sent again');
          return {
            refused: [{ index: invalid, answer: what }],
            retry: batch.map((_, i) => i).filter((i) => i !== invalid),
          };
        }
        return { refused: batch.map((_, index) => ({ index, answer: what })), retry: [] };
      }
      throw new TransientDeliveryError(what, answer.retryAfterMs);
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}
