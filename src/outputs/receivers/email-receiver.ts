// The `email` receiver: a batch is one digest mail over SMTP with STARTTLS or implicit TLS (nodemailer), and
// at most one mail leaves per `minIntervalMs`, so a flood of critical records is one mail, not thousands.
//
// How the interval holds with a forwarder that calls `send(batch)` per batch: `send` itself waits (abortable)
// until `minIntervalMs` has passed since the last mail the server accepted, then mails the whole batch; the
// forwarder keeps its cursor while it waits, and the records stored meanwhile go into the next batch, the next
// mail. For the digest to carry every record since the last mail, the forwarder should read the next batch only
// when `readyAt()` has come (it may ignore it: the interval still holds), with a large `maxRecords`
// (EMAIL_BATCHING). The interval is kept in memory, by the output (Pacing), so a rotated password or a reload
// keeps it; after a restart of the daemon the first mail may leave sooner.
//
// A batch is acknowledged when the server accepted the mail (250 after DATA). Answers: 535 and other auth
// failures, and every recipient refused for good (5xx at RCPT: the address is wrong), pause the output; a 5xx
// for the message itself (a content filter) refuses the batch, which goes to the dead letters; 4xx, timeouts and
// connection or TLS failures are transient. Some recipients refused, others not: delivered, with a warning.
import { createRequire } from 'node:module';
import { hostname as osHostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.js';
import { systemCas } from '../../system-cas.js';
import { buildDigest, buildSummaryMail, type Digest } from './email-digest.js';
import {
  AuthDeliveryError,
  DELIVERED,
  type DeliveryReport,
  type Pacing,
  type Receiver,
  TransientDeliveryError,
} from './receiver.js';

// Required by the first mail, not when this module is imported: a serve with no email output never loads
// nodemailer (its CommonJS build, so require() is synchronous).
const requireHere = createRequire(import.meta.url);
const loadNodemailer = (): typeof import('nodemailer') =>
  requireHere('nodemailer') as typeof import('nodemailer');

export interface EmailOptions {
  host: string;
  /** null: 465 for `tls`, 587 for `starttls`. */
  port: number | null;
  /** `starttls`: the upgrade is required, never plain text; `tls`: TLS from the first byte (SMTPS). */
  security: 'starttls' | 'tls';
  /** PEM text of the CA to verify the server with; null: the system CAs (Node's and the distribution's). */
  ca: string | null;
  /** SMTP AUTH (with `password`, read from its file); null: none. */
  username: string | null;
  password: string | null;
  from: string;
  to: readonly string[];
  subjectPrefix: string;
  minIntervalMs: number;
  connectTimeoutMs: number;
  /** No answer from the server for this long, in any step, fails the mail. */
  socketTimeoutMs: number;
}

export interface EmailDeps {
  logger: Logger;
  now?: () => number;
  /** Waits out the interval; tests pass their own to hold the clock. */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Names this collector in the digest; default: the host name. */
  collector?: string;
  /** When the last mail left, shared with the receivers built before and after this one (default: its own). */
  pacing?: Pacing;
}

export interface EmailReceiver extends Receiver {
  /** When the next mail may leave (epoch ms): a forwarder reading the next batch then gets every record since. */
  readyAt(): number;
}

/** What the forwarder's batching of an email output is unless the operator set `batch` (config/output-keys). */
export { EMAIL_BATCHING } from '../../config/output-keys/email-keys.js';

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  command?: string;
}

const defaultWait = async (ms: number, signal: AbortSignal) => {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw signal.reason;
  }
};

export function createEmailReceiver(options: EmailOptions, deps: EmailDeps): EmailReceiver {
  const now = deps.now ?? Date.now;
  const wait = deps.wait ?? defaultWait;
  const collector = deps.collector ?? osHostname();
  const port = options.port ?? (options.security === 'tls' ? 465 : 587);
  const pacing = deps.pacing ?? { lastSentAt: Number.NEGATIVE_INFINITY };
  const where = `email ${options.host}:${port}`;

  const classify = (error: SmtpError): Error => {
    const code = error.responseCode ?? 0;
    const what = `${where}: ${code > 0 ? `${code} ` : ''}${error.message}`;
    if (error.code === 'EAUTH' || code === 530 || code === 534 || code === 535)
      return new AuthDeliveryError(what);
    if (error.code === 'EENVELOPE' && code >= 500 && code < 600)
      return new AuthDeliveryError(`${what} (every recipient refused: check the output's to and from)`);
    return new TransientDeliveryError(what);
  };

  /** Mails `digest`, made of `items` records or summaries (all refused when the server refuses the message). */
  const mail = async (digest: Digest, items: number, signal: AbortSignal): Promise<DeliveryReport> => {
    const transport = loadNodemailer().createTransport({
      host: options.host,
      port,
      secure: options.security === 'tls',
      requireTLS: options.security === 'starttls',
      ...(options.username !== null
        ? { auth: { user: options.username, pass: options.password ?? '' } }
        : {}),
      tls: { ca: options.ca ?? systemCas(), rejectUnauthorized: true },
      connectionTimeout: options.connectTimeoutMs,
      greetingTimeout: options.socketTimeoutMs,
      socketTimeout: options.socketTimeoutMs,
      logger: false,
    });
    // nodemailer takes no signal: closing the transport ends the connection, and the mail is not acknowledged.
    const onAbort = () => transport.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const info = await transport.sendMail({
        from: options.from,
        to: [...options.to],
        subject: digest.subject,
        text: digest.text,
        messageId: digest.messageId,
      });
      if (info.rejected.length > 0)
        deps.logger.warn(
          { receiver: 'email', rejected: info.rejected.map(String) },
          'the mail server refused some recipients; the others got the mail',
        );
      return DELIVERED;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const smtp = error as SmtpError;
      const code = smtp.responseCode ?? 0;
      if (smtp.code === 'EMESSAGE' && code >= 500 && code < 600) {
        const answer = `${where}: ${code} ${smtp.message}`;
        return { refused: Array.from({ length: items }, (_, index) => ({ index, answer })), retry: [] };
      }
      throw classify(smtp);
    } finally {
      signal.removeEventListener('abort', onAbort);
      transport.close();
    }
  };

  /** Waits out the interval, then mails: at most one mail per `minIntervalMs`, summaries included. */
  const paced = async (digest: () => Digest, items: number, signal: AbortSignal): Promise<DeliveryReport> => {
    signal.throwIfAborted();
    if (items === 0) return DELIVERED;
    const left = pacing.lastSentAt + options.minIntervalMs - now();
    if (left > 0) await wait(left, signal);
    signal.throwIfAborted();
    const report = await mail(digest(), items, signal);
    // A refused mail left too: it counts against the interval like an accepted one.
    pacing.lastSentAt = now();
    return report;
  };

  return {
    readyAt: () => pacing.lastSentAt + options.minIntervalMs,
    send: (batch, signal) =>
      paced(() => buildDigest(batch, collector, options.subjectPrefix), batch.length, signal),
    sendSummaries: (summaries, signal) =>
      paced(() => buildSummaryMail(summaries, collector, options.subjectPrefix), summaries.length, signal),
    async close(): Promise<void> {},
  };
}
