// The one HTTP client of the HTTP receivers (webhook, splunk_hec, elasticsearch): an undici agent per output that
// verifies the receiver against the system CAs or the output's own `ca`, bounded waits, an answer read to a cap
// and within one deadline, Retry-After read, what each status class means, and whatever keeps an answer from
// arriving reported as a transient failure.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Agent, Dispatcher } from 'undici';
import type { OutputConfig } from '../../config/outputs-schema.js';
import { systemCas } from '../../system-cas.js';
import { TransientDeliveryError } from './receiver.js';
import { oneLine } from './record-text.js';

// Required by the first HTTP output that starts, not when this module is imported: a serve that forwards to no
// HTTP receiver (most starts, and every one with no output) never loads undici's hundred modules. CommonJS, so
// require() is synchronous.
const requireHere = createRequire(import.meta.url);
const loadUndici = (): typeof import('undici') => requireHere('undici') as typeof import('undici');

export interface HttpReceiverOptions {
  /** Base URL, `https://` (verified) or `http://`. */
  url: string;
  /** PEM text of the CA to verify the receiver with; null: the system CAs (Node's and the distribution's). */
  ca: string | null;
  connectTimeoutMs: number;
  /** Until the answer's status line and headers. */
  headersTimeoutMs: number;
  /** The whole of the answer's body, from its headers to its end (so also any pause between two chunks). */
  bodyTimeoutMs: number;
}

/**
 * Bytes of an answer's body read at most, unless the receiver asks for more: far more than any answer a webhook
 * or HEC gives (a status and a line of JSON), so that a receiver answering without end costs this much, no more.
 */
export const ANSWER_BYTES = 64 * 1024;

export interface HttpAnswer {
  status: number;
  /** The body as read: the whole of it, or its first bytes when `cut`. */
  text: string;
  /**
   * Null when the body was read to its end; else why it was not (over the cap, past the deadline): the rest was
   * not read and the connection was dropped. What a cut answer counts as is the receiver's to say.
   */
  cut: string | null;
  /** From `Retry-After` (seconds or an HTTP date), else null. */
  retryAfterMs: number | null;
  /** `Location`, for a redirect's message; null when absent. */
  location: string | null;
}

/**
 * What an answer's status says of a whole request, every class named here once for the HTTP receivers:
 * - 2xx `taken`: the receiver took the request (it then reads the body if it needs it);
 * - 401, 403 `auth`: our credentials are refused, the output pauses;
 * - 408, 425, 429, 5xx `transient`: the receiver may take it later;
 * - 3xx `transient`: redirects are not followed (records and credentials go only where the operator pointed
 *   them); a URL that moved is a setting to fix, shown as the output's last error, never a refusal of records;
 * - 1xx or outside 100-599 `transient`: not an answer;
 * - any other 4xx `refused`: the request itself is refused (what that means per record is the receiver's).
 */
export type StatusClass = 'taken' | 'auth' | 'transient' | 'refused';

export function classifyStatus(status: number): StatusClass {
  if (status >= 200 && status <= 299) return 'taken';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408 || status === 425 || status === 429) return 'transient';
  if (status >= 400 && status <= 499) return 'refused';
  return 'transient';
}

/** An answer for an error message, one line: `HTTP 302: redirected to …, not followed`, or the status and body. */
export function describeAnswer(answer: HttpAnswer, chars = 300): string {
  if (answer.status >= 300 && answer.status <= 399)
    return `HTTP ${answer.status}: redirected to ${brief(answer.location ?? '(no Location)', chars)}, not followed (set the output's url to the address the receiver names)`;
  const text = brief(answer.text, chars);
  return `HTTP ${answer.status}${text ? `: ${text}` : ''}`;
}

/**
 * An output's common keys as HTTP options: `ca` is a file read now (at each start of the output: a missing one
 * pauses it), `timeoutMs` bounds each wait, the connection at most 10 s of it.
 */
export function httpOptions(output: OutputConfig): HttpReceiverOptions {
  return {
    url: output.url as string,
    ca: output.ca === null ? null : readFileSync(output.ca, 'utf8'),
    connectTimeoutMs: Math.min(output.timeoutMs, 10_000),
    headersTimeoutMs: output.timeoutMs,
    bodyTimeoutMs: output.timeoutMs,
  };
}

function createHttpAgent(options: HttpReceiverOptions): Agent {
  return new (loadUndici().Agent)({
    connect: { timeout: options.connectTimeoutMs, ca: options.ca ?? systemCas() },
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: 30_000,
    connections: 2,
  });
}

export function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

export interface HttpClient {
  /**
   * POSTs `body` to `url` and reads the answer: at most `maxBytes` of its body (ANSWER_BYTES by default), all of
   * it within `bodyTimeoutMs` of its headers; past either the connection is dropped and the answer comes back
   * `cut`. Whatever keeps an answer from arriving (refused, reset, timed out, a certificate that does not
   * verify) is a TransientDeliveryError naming the receiver; an abort rejects with the signal's reason.
   */
  post(
    url: URL,
    headers: Record<string, string>,
    body: string | Buffer,
    signal: AbortSignal,
    maxBytes?: number,
  ): Promise<HttpAnswer>;
  close(): Promise<void>;
}

/** The client of one output; `what` names the receiver in its errors (`webhook`, `elasticsearch`, ...). */
export function createHttpClient(options: HttpReceiverOptions, what: string): HttpClient {
  const agent = createHttpAgent(options);
  return {
    async post(url, headers, body, signal, maxBytes = ANSWER_BYTES) {
      try {
        const answer = await loadUndici().request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
          signal,
        });
        const { text, cut } = await readBody(answer.body, maxBytes, options.bodyTimeoutMs);
        const location = answer.headers.location;
        return {
          status: answer.statusCode,
          text,
          cut,
          retryAfterMs: parseRetryAfter(answer.headers['retry-after'], Date.now()),
          location: (Array.isArray(location) ? location[0] : location) ?? null,
        };
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
        const detail = [e.cause?.code ?? e.code, e.message, e.cause?.message].filter(Boolean).join(': ');
        throw new TransientDeliveryError(`${what} ${url.origin}: ${detail}`);
      }
    },
    close: () => agent.close(),
  };
}

/**
 * An answer's body up to `maxBytes`, within `deadlineMs`: the per-chunk timeout alone lets a byte every few
 * seconds hold a delivery for ever, and an unbounded read lets an endless body take all memory. Destroying the
 * body aborts the request, and undici closes a connection whose answer did not end.
 */
async function readBody(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  deadlineMs: number,
): Promise<{ text: string; cut: string | null }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut: string | null = null;
  const timer = setTimeout(() => {
    cut = `the answer did not end within ${deadlineMs} ms`;
    body.destroy();
  }, deadlineMs);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        cut = `the answer is over ${maxBytes} bytes`;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    if (cut === null) throw error;
  } finally {
    clearTimeout(timer);
    if (cut !== null) body.destroy();
  }
  return { text: Buffer.concat(chunks).toString('utf8'), cut };
}

/** An answer's body for an error message: short, one line. */
export function brief(text: string, chars = 300): string {
  const line = oneLine(text, text.length).replace(/\s+/g, ' ').trim();
  return line.length > chars ? `${line.slice(0, chars)}…` : line;
}

/** Whether a host is loopback: plain http:// to it needs no warning. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
