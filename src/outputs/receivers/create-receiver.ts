// Picks the receiver of an output's type and turns the output's configuration (common keys plus its type's,
// defaults filled in by applyOutputDefaults) into that receiver's options: files (`ca`) read at each start of
// the output, secrets at each send (rotating-secrets.ts), `timeoutMs` as each receiver's waits.
import { readFileSync } from 'node:fs';
import type { OutputConfig, OutputType } from '../../config/outputs-schema.js';
import type { Logger } from '../../log.js';
import { threatcolVersion } from '../../package-version.js';
import { readSecret } from '../secrets.js';
import { createElasticsearchReceiver } from './elasticsearch-receiver.js';
import { createEmailReceiver } from './email-receiver.js';
import { httpOptions } from './http-post.js';
import { AuthDeliveryError, type Pacing, type Receiver } from './receiver.js';
import { withSecrets } from './rotating-secrets.js';
import { createSplunkHecReceiver } from './splunk-hec-receiver.js';
import type { SyslogFacility } from './syslog-message.js';
import { createSyslogReceiver } from './syslog-receiver.js';
import { createWebhookReceiver } from './webhook.js';

export interface ReceiverContext {
  env: Record<string, string | undefined>;
  logger: Logger;
  /** The output's pacing, kept across its receivers (email); absent: this receiver's rebuilds share one. */
  pacing?: Pacing;
}

type ReceiverFactory = (output: OutputConfig, context: ReceiverContext) => Receiver;

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const caText = (output: OutputConfig): string | null =>
  output.ca === null ? null : readFileSync(output.ca, 'utf8');
const connectTimeout = (output: OutputConfig) => Math.min(output.timeoutMs, 10_000);

const FACTORIES: Record<OutputType, ReceiverFactory> = {
  webhook: (output, { env }) => createWebhookReceiver(output, env),

  syslog: (output, { logger }) =>
    createSyslogReceiver(
      {
        host: output.host as string,
        port: num(output.port),
        transport: output.transport === 'tcp' ? 'tcp' : 'tls',
        format: output.format === 'cef' ? 'cef' : 'json',
        facility: output.facility as SyslogFacility,
        ca: caText(output),
        hostname: str(output.hostname),
        sdId: output.sdId as string,
        connectTimeoutMs: connectTimeout(output),
        writeTimeoutMs: output.timeoutMs,
      },
      { logger, productVersion: threatcolVersion() },
    ),

  splunk_hec: (output, { env, logger }) => {
    const http = httpOptions(output);
    return withSecrets(
      () => [readSecret('token', output.tokenFile, output.tokenEnv, env)],
      ([token]) => {
        if (!token) throw new AuthDeliveryError('splunk_hec needs its HEC token: set tokenFile or tokenEnv');
        return createSplunkHecReceiver(
          {
            ...http,
            token,
            index: str(output.index),
            sourcetype: output.sourcetype as string,
            source: output.source as string,
            host: str(output.host),
            ackPollIntervalMs: output.ackPollIntervalMs as number,
            ackTimeoutMs: output.ackTimeoutMs as number,
          },
          { logger },
        );
      },
    );
  },

  elasticsearch: (output, { env, logger }) => {
    const http = httpOptions(output);
    return withSecrets(
      () => [
        readSecret('API key', output.tokenFile, output.tokenEnv, env),
        readSecret('password', output.passwordFile, output.passwordEnv, env),
      ],
      ([apiKey, password]) =>
        createElasticsearchReceiver(
          {
            ...http,
            index: output.index as string,
            username: str(output.username),
            password: password ?? null,
            apiKey: apiKey ?? null,
            timestampField: str(output.timestampField),
          },
          { logger },
        ),
    );
  },

  email: (output, { env, logger, pacing = { lastSentAt: Number.NEGATIVE_INFINITY } }) => {
    const ca = caText(output);
    const receiver = withSecrets(
      () => [readSecret('password', output.passwordFile, output.passwordEnv, env)],
      ([password]) =>
        createEmailReceiver(
          {
            host: output.host as string,
            port: num(output.port),
            security: output.security === 'tls' ? 'tls' : 'starttls',
            ca,
            username: str(output.username),
            password: password ?? null,
            from: output.from as string,
            to: output.to as string[],
            subjectPrefix: output.subjectPrefix as string,
            minIntervalMs: output.minIntervalMs as number,
            connectTimeoutMs: connectTimeout(output),
            socketTimeoutMs: output.timeoutMs,
          },
          { logger, pacing },
        ),
    );
    // Known before the first send of this receiver too: the output may have mailed moments ago (a reload).
    return { ...receiver, readyAt: () => pacing.lastSentAt + (output.minIntervalMs as number) };
  },
};

/**
 * How much of each stored line the output's feed checks (OutputFeedOptions.check): receivers that send the line
 * as it is, in an envelope made of the record's head, take 'head'; those that reformat it (CEF, a Slack
 * message, a mail digest) read the whole record, so every line is parsed and checked first.
 */
export function lineCheck(output: OutputConfig): 'record' | 'head' {
  if (output.type === 'email') return 'record';
  if (output.type === 'syslog' && output.format === 'cef') return 'record';
  if (output.type === 'webhook' && output.format === 'slack') return 'record';
  return 'head';
}

export function createReceiver(output: OutputConfig, context: ReceiverContext): Receiver {
  return FACTORIES[output.type](output, context);
}
