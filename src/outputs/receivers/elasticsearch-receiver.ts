// The `elasticsearch` receiver (Elasticsearch or OpenSearch): `_bulk` with `create` and the record id as `_id`,
// each item's answer walked. Plain undici rather than the official client, whose product check refuses
// OpenSearch (docs/development.md).
//
// Item answers: 2xx taken; 409 (version conflict) means a document with this `_id` is already stored, a re-sent
// record, so taken too; 429 and 5xx are retried; 401/403 are retried as well (a missing privilege or a blocked
// index is fixed by the operator, never by dead-lettering every record); any other 4xx (a mapping error) is
// refused with the item's error type and reason. Whole-request answers: 401/403 pause the output (auth), 429,
// 5xx and anything else that is not a bulk answer are transient, a bulk answer cut (over its cap, too slow) too:
// the items cannot be walked, and the batch sent again is harmless (each record a `create` by its id).
import type { Logger } from '../../log.js';
import {
  ANSWER_BYTES,
  brief,
  classifyStatus,
  createHttpClient,
  describeAnswer,
  type HttpReceiverOptions,
} from './http-post.js';
import {
  AuthDeliveryError,
  DELIVERED,
  type DeliveryReport,
  type OutgoingRecord,
  type Receiver,
  type RefusedRecord,
  TransientDeliveryError,
} from './receiver.js';

export interface ElasticsearchOptions extends HttpReceiverOptions {
  /** Index, alias or data stream the records go to. */
  index: string;
  /** Basic authentication (with `password`). */
  username: string | null;
  password: string | null;
  /** `Authorization: ApiKey <apiKey>`: the encoded key as Elasticsearch returns it. */
  apiKey: string | null;
  /** A field set to the record's `received_at` in each document (data streams need `@timestamp`); null: none. */
  timestampField: string | null;
}

export interface ElasticsearchDeps {
  logger: Logger;
}

interface BulkItem {
  status?: number;
  error?: { type?: string; reason?: string };
}

// Only what the walk reads: a 10,000-item answer stays small.
const FILTER = 'filter_path=errors,items.*.status,items.*.error.type,items.*.error.reason';

/**
 * The bulk answer's cap, from the request: an item's answer is its status and, refused, an error type and a
 * reason that may quote a value of the document; so the request's own size, 512 bytes per record and 64 KiB
 * hold any genuine answer, and an answer past it is cut (a transient failure, the batch sent again).
 */
export const bulkAnswerBytes = (records: number, requestChars: number): number =>
  ANSWER_BYTES + 512 * records + requestChars;

export function createElasticsearchReceiver(
  options: ElasticsearchOptions,
  deps: ElasticsearchDeps,
): Receiver {
  const client = createHttpClient(options, 'elasticsearch');
  const base = new URL(options.url);
  const bulkUrl = new URL(`${base.pathname.replace(/\/+$/, '')}/_bulk?${FILTER}`, base);
  const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' };
  if (options.apiKey !== null) headers.authorization = `ApiKey ${options.apiKey}`;
  else if (options.username !== null)
    headers.authorization = `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`;
  const index = JSON.stringify(options.index);
  const stamp = options.timestampField === null ? null : JSON.stringify(options.timestampField);

  const document = (entry: OutgoingRecord) =>
    stamp === null
      ? entry.line
      : `{${stamp}:${JSON.stringify(entry.head.received_at)},${entry.line.slice(1)}`;

  return {
    async send(batch: readonly OutgoingRecord[], signal: AbortSignal): Promise<DeliveryReport> {
      signal.throwIfAborted();
      if (batch.length === 0) return DELIVERED;
      let body = '';
      for (const entry of batch)
        body += `{"create":{"_index":${index},"_id":${JSON.stringify(entry.id)}}}\n${document(entry)}\n`;
      const answer = await client.post(
        bulkUrl,
        headers,
        body,
        signal,
        bulkAnswerBytes(batch.length, body.length),
      );
      const what = `elasticsearch ${base.origin}: ${describeAnswer(answer)}`;
      const kind = classifyStatus(answer.status);
      if (kind === 'auth') throw new AuthDeliveryError(what);
      // A whole request refused (400: a body Elasticsearch could not read) is ours to fix, not the records':
      // transient like the rest, never dead-lettered.
      if (kind !== 'taken') throw new TransientDeliveryError(what, answer.retryAfterMs);
      if (answer.cut !== null)
        throw new TransientDeliveryError(
          `elasticsearch ${base.origin}: HTTP ${answer.status}: ${answer.cut}; the connection was dropped and the batch will be sent again`,
        );
      let parsed: { errors?: boolean; items?: Record<string, BulkItem>[] };
      try {
        parsed = JSON.parse(answer.text);
      } catch {
        throw new TransientDeliveryError(`elasticsearch ${base.origin}: the bulk answer is not JSON`);
      }
      if (parsed.errors === false) return DELIVERED;
      const items = parsed.items;
      if (!Array.isArray(items) || items.length !== batch.length)
        throw new TransientDeliveryError(
          `elasticsearch ${base.origin}: the bulk answer has ${Array.isArray(items) ? items.length : 'no'} items for ${batch.length} records`,
        );
      const refused: RefusedRecord[] = [];
      const retry: number[] = [];
      items.forEach((wrapper, i) => {
        const item = Object.values(wrapper)[0] ?? {};
        const status = item.status ?? 0;
        if ((status >= 200 && status <= 299) || status === 409) return;
        if (status === 429 || status >= 500 || status === 401 || status === 403 || status < 200)
          retry.push(i);
        else
          refused.push({
            index: i,
            answer: `${status} ${item.error?.type ?? 'error'}: ${brief(item.error?.reason ?? '')}`,
          });
      });
      if (retry.length > 0)
        deps.logger.debug(
          { receiver: 'elasticsearch', retry: retry.length, refused: refused.length },
          'bulk items to send again',
        );
      return { refused, retry };
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}
