// The one HTTP client of the HTTP receivers (webhook, splunk_hec, elasticsearch): an undici agent per output that
// verifies the receiver against the system CAs or the output's own `ca`, bounded waits, Retry-After read, and
// whatever keeps an answer from arriving reported as a transient failure.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import type { OutputConfig } from '../../config/outputs-schema.js';
import { systemCas } from '../../system-cas.js';
import { TransientDeliveryError } from './receiver.js';

export interface HttpReceiverOptions {
  /** Base URL, `https://` (verified) or `http://`. */
  url: string;
  /** PEM text of the CA to verify the receiver with; null: the system CAs (Node's and the distribution's). */
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

export function createHttpAgent(options: HttpReceiverOptions): Agent {
  return new Agent({
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

/**
 * POSTs `body` to `url` and reads the whole answer. Whatever keeps an answer from arriving (refused, reset,
 * timed out, a certificate that does not verify) is a TransientDeliveryError naming `what`; an abort rejects
 * with the signal's reason.
 */
export async function postHttp(
  agent: Agent,
  url: URL,
  headers: Record<string, string>,
  body: string | Buffer,
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
    const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
    const detail = [e.cause?.code ?? e.code, e.message, e.cause?.message].filter(Boolean).join(': ');
    throw new TransientDeliveryError(`${what} ${url.origin}: ${detail}`);
  }
}

/** An answer's body for an error message: short, one line. */
export function brief(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** Whether a host is loopback: plain http:// to it needs no warning. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
