// What the HTTP receivers (splunk_hec, elasticsearch) share: an undici agent per output that verifies the
// receiver against the system CAs or the output's own CA, bounded waits, and connection failures as transient.
import { Agent, request } from 'undici';
import { TransientDeliveryError } from './receiver.js';

export interface HttpReceiverOptions {
  /** Base URL, `https://` (verified) or `http://`. */
  url: string;
  /** PEM text of the CA to verify the receiver with; null: the system CAs. */
  ca: string | null;
  connectTimeoutMs: number;
  /** Until the answer's status line and headers. */
  headersTimeoutMs: number;
  /** Between two chunks of the answer's body. */
  bodyTimeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  text: string;
  /** From `Retry-After` (seconds or an HTTP date), else null. */
  retryAfterMs: number | null;
}

export function createHttpAgent(options: HttpReceiverOptions): Agent {
  return new Agent({
    connect: {
      timeout: options.connectTimeoutMs,
      ...(options.ca !== null ? { ca: options.ca } : {}),
    },
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: 30_000,
  });
}

export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/**
 * POSTs `body` to `url` and reads the whole answer. Whatever keeps an answer from arriving (refused, reset,
 * timed out, a certificate that does not verify) is a TransientDeliveryError naming `what`; an abort rejects
 * with the signal's reason.
 */
export async function postHttp(
  agent: Agent,
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  what: string,
): Promise<HttpAnswer> {
  try {
    const answer = await request(url, { method: 'POST', headers, body, dispatcher: agent, signal });
    const text = await answer.body.text();
    return {
      status: answer.statusCode,
      text,
      retryAfterMs: parseRetryAfter(answer.headers['retry-after'], Date.now()),
    };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const cause = (error as { cause?: Error }).cause;
    const detail = [(error as Error).message, cause?.message].filter(Boolean).join(': ');
    throw new TransientDeliveryError(`${what} ${url.origin}: ${detail}`);
  }
}

/** An answer's body for an error message: short, one line. */
export function brief(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** The schema properties every HTTP receiver has (beside the keys every output has). */
export const httpSchemaProperties = {
  url: {
    type: 'string',
    pattern: '^https?://',
    description: 'base URL of the receiver (https:// is verified)',
  },
  ca: {
    type: ['string', 'null'],
    default: null,
    description: 'PEM CA file to verify the receiver with; null: the system CAs',
  },
  connectTimeoutMs: {
    type: 'integer',
    minimum: 1,
    maximum: 86_400_000,
    default: 10_000,
    description: 'connection and TLS handshake must finish within this',
  },
  headersTimeoutMs: {
    type: 'integer',
    minimum: 1,
    maximum: 86_400_000,
    default: 60_000,
    description: "the receiver's answer must begin within this",
  },
  bodyTimeoutMs: {
    type: 'integer',
    minimum: 1,
    maximum: 86_400_000,
    default: 60_000,
    description: "no gap in the receiver's answer longer than this",
  },
} as const;
