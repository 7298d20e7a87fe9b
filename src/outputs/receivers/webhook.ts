// The `webhook` receiver: one HTTP POST per batch to any URL, as JSON (`{"records": [...]}`) or as a Slack-style
// `{"text": ...}` message (Slack, Mattermost, Teams incoming webhooks), signed with HMAC-SHA256 when a secret is set.
import { createHash, createHmac } from 'node:crypto';
import type { OutputConfig } from '../../config/outputs-schema.js';
import { readSecret } from '../secrets.js';
import { classifyStatus, createHttpClient, describeAnswer, httpOptions } from './http-post.js';
import {
  AuthDeliveryError,
  DELIVERED,
  type DeliveryReport,
  type GroupSummary,
  type OutgoingRecord,
  type Receiver,
  TransientDeliveryError,
} from './receiver.js';
import { slackMessage, slackSummary } from './slack-message.js';

/** Characters of the receiver's answer quoted in a dead letter or an error. */
const ANSWER_CHARS = 200;

export function createWebhookReceiver(
  output: OutputConfig,
  env: Record<string, string | undefined>,
): Receiver {
  const url = new URL(output.url as string);
  const client = createHttpClient(httpOptions(output), 'webhook');
  const slack = output.format === 'slack';
  const quoted = typeof output.slackMaxRecords === 'number' ? output.slackMaxRecords : 10;
  /** One POST: what the answer says of it (a refusal's answer, or null when taken). */
  const postOnce = async (
    body: string | Buffer,
    key: string,
    signal: AbortSignal,
  ): Promise<string | null> => {
    // Read at each send: a rotated secret or token file is taken without a reload.
    const secret = readSecret('secret', output.secretFile, output.secretEnv, env);
    const token = readSecret('token', output.tokenFile, output.tokenEnv, env);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'threatcol',
      'idempotency-key': key,
    };
    if (secret !== null) {
      headers['x-threatcol-signature'] = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    }
    if (token !== null) headers.authorization = `Bearer ${token}`;
    // The body is only quoted: a 2xx counts as delivered even when its answer was cut (over the cap, too slow).
    const response = await client.post(url, headers, body, signal);
    const answer = describeAnswer(response, ANSWER_CHARS);
    switch (classifyStatus(response.status)) {
      case 'taken':
        return null;
      case 'auth':
        throw new AuthDeliveryError(`${url.origin} refused the credentials: ${answer}`);
      case 'transient':
        throw new TransientDeliveryError(answer, response.retryAfterMs);
      case 'refused':
        return answer;
    }
  };
  return {
    async send(batch: readonly OutgoingRecord[], signal: AbortSignal): Promise<DeliveryReport> {
      if (batch.length === 0) return DELIVERED;
      const body = slack ? JSON.stringify({ text: slackMessage(batch, quoted) }) : jsonBody(batch);
      const answer = await postOnce(body, idempotencyKey(batch), signal);
      // The request as a whole is refused: a webhook has no per-record answer, so every record of the batch
      // is dead-lettered with it (re-sent with `outputs dead-letter NAME --retry`).
      return answer === null
        ? DELIVERED
        : { refused: batch.map((_, index) => ({ index, answer })), retry: [] };
    },
    /** One POST per summary, in order; a failure after the first delivered hands the rest back to retry. */
    async sendSummaries(summaries, signal): Promise<DeliveryReport> {
      const refused: { index: number; answer: string }[] = [];
      for (const [index, summary] of summaries.entries()) {
        const body = slack ? JSON.stringify({ text: slackSummary(summary) }) : summaryBody(summary);
        try {
          const answer = await postOnce(body, summaryKey(summary), signal);
          if (answer !== null) refused.push({ index, answer });
        } catch (error) {
          if (index === 0 || signal.aborted) throw error;
          return { refused, retry: summaries.slice(index).map((_, i) => index + i) };
        }
      }
      return { refused, retry: [] };
    },
    close: () => client.close(),
  };
}

const OPEN = Buffer.from('{"records":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/** `{"records":[line,line,...]}`: from the stored bytes when the feed gave them (no text to encode again). */
export function jsonBody(batch: readonly OutgoingRecord[]): string | Buffer {
  const parts: Buffer[] = [OPEN];
  for (const r of batch) {
    const bytes = r.bytes;
    if (bytes === undefined) return `{"records":[${batch.map((r) => r.line).join(',')}]}`;
    parts.push(bytes, COMMA);
  }
  parts[parts.length - 1] = CLOSE;
  return Buffer.concat(parts);
}

/** The same records give the same key: sha256 of their ids (each record's own id is in the body too). */
export function idempotencyKey(batch: readonly OutgoingRecord[]): string {
  // One update of the ids joined (the same digest as one update per id and newline, in a native call, not 1,000).
  let ids = '';
  for (const r of batch) ids += `${r.id}\n`;
  return createHash('sha256').update(ids).digest('hex').slice(0, 32);
}

/**
 * A group summary as JSON: `group` (the values of `group.by`; null for the groups past `maxGroups`), `count`,
 * `first_at`, `last_at`, `sensors`, `records` (the samples, as stored), `window`.
 */
export function summaryBody(summary: GroupSummary): string {
  return (
    `{"group":${JSON.stringify(summary.group)},"count":${summary.count},"first_at":${JSON.stringify(summary.firstAt)},` +
    `"last_at":${JSON.stringify(summary.lastAt)},"sensors":${JSON.stringify(summary.sensors)},` +
    `"records":[${summary.samples.join(',')}],"window":${JSON.stringify(summary.window)}}`
  );
}

/** The same summary sent again (after a crash) has the same key: its group, first time and count. */
export function summaryKey(summary: GroupSummary): string {
  return createHash('sha256')
    .update(`group\n${summary.key}\n${summary.firstAt}\n${summary.count}`)
    .digest('hex')
    .slice(0, 32);
}
