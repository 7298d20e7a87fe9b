// Creates the stream and KV buckets when missing (idempotent) and warns when existing ones differ from the
// configuration; retention and the dedupe window are applied to an existing stream, replicas are not.

import { setTimeout as sleep } from 'node:timers/promises';
import {
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { nanos } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { RECORDS_PREFIX } from './names.js';

const DAY_S = 86_400;
/**
 * The window covers a sender's retry after a 503 in doubt (its retry reuses the first attempt's message ids:
 * uncertain-requests.ts) for the publish timeout plus this long, also with dedupe off.
 */
export const SENDER_RETRY_S = 60;

/** The stream's limits from `store.retention` and `dedupe.windowSeconds`. */
export function streamLimits(
  config: Config,
): Pick<StreamConfig, 'max_age' | 'max_bytes' | 'duplicate_window'> {
  const { days, maxBytes } = config.store.retention;
  // Dedupe off still keeps a window: a publish retried after a lost ack, or a request its sender retried after
  // a 503 that came while a publish was on the wire, must not be stored twice (record ids are unique, so a
  // longer window merges nothing else). It must not exceed max_age (a JetStream rule).
  const windowS = Math.max(
    config.dedupe.windowSeconds,
    Math.ceil(config.nats.publishTimeoutMs / 1000) + SENDER_RETRY_S,
  );
  return {
    max_age: days === null ? 0 : nanos(days * DAY_S * 1000),
    max_bytes: maxBytes ?? -1,
    duplicate_window: nanos(Math.min(windowS, days === null ? windowS : days * DAY_S) * 1000),
  };
}

export function recordsStreamConfig(config: Config): Partial<StreamConfig> & { name: string } {
  return {
    name: config.nats.stream,
    subjects: [`${RECORDS_PREFIX}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    num_replicas: config.nats.replicas,
    ...streamLimits(config),
  };
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; message?: string; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10059 || /stream not found/i.test(e?.message ?? '') || e?.code === '404';
}

/** Creates or checks the records stream. */
export async function ensureStream(jsm: JetStreamManager, config: Config, logger: Logger): Promise<void> {
  const wanted = recordsStreamConfig(config);
  let info: Awaited<ReturnType<JetStreamManager['streams']['info']>>;
  try {
    info = await jsm.streams.info(wanted.name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      await jsm.streams.add(wanted);
      logger.info({ stream: wanted.name, replicas: wanted.num_replicas }, 'created the NATS stream');
      return;
    } catch (addError) {
      // Another collector created it in between: check that one instead.
      info = await jsm.streams.info(wanted.name).catch(() => {
        throw addError;
      });
    }
  }
  const have = info.config;
  if (have.num_replicas !== wanted.num_replicas) {
    logger.warn(
      { stream: wanted.name, replicas: have.num_replicas, configured: wanted.num_replicas },
      'the NATS stream has a different number of replicas than nats.replicas; left as it is',
    );
  }
  if (!(have.subjects ?? []).includes(`${RECORDS_PREFIX}.>`)) {
    logger.warn(
      { stream: wanted.name, subjects: have.subjects, expected: `${RECORDS_PREFIX}.>` },
      'the NATS stream does not cover the record subjects; left as it is',
    );
  }
  if (
    have.max_age !== wanted.max_age ||
    have.max_bytes !== wanted.max_bytes ||
    have.duplicate_window !== wanted.duplicate_window
  ) {
    await jsm.streams.update(wanted.name, {
      ...have,
      max_age: wanted.max_age,
      max_bytes: wanted.max_bytes,
      duplicate_window: wanted.duplicate_window,
    } as StreamConfig);
    logger.info(
      { stream: wanted.name, maxAgeS: Number(wanted.max_age) / 1e9, maxBytes: wanted.max_bytes },
      'applied store.retention and dedupe.windowSeconds to the NATS stream',
    );
  }
}

/**
 * Opens a KV bucket, creating it when missing; warns when its replicas differ from nats.replicas. `signal` (the
 * store's close) ends its retries: a command that already gave up must not be held by them.
 */
export async function ensureBucket(
  js: JetStreamClient,
  jsm: JetStreamManager,
  name: string,
  config: Config,
  logger: Logger,
  history: number,
  signal: AbortSignal,
) {
  const kvm = new Kvm(js);
  // Creating is idempotent, but on a cluster that has just formed (or several collectors and a CLI creating
  // the same bucket at once) an attempt can fail transiently: retry for a few seconds before giving up.
  let kv: Awaited<ReturnType<Kvm['create']>> | undefined;
  for (let attempt = 1; kv === undefined; attempt++) {
    signal.throwIfAborted();
    try {
      kv = await kvm.create(name, { replicas: config.nats.replicas, history });
    } catch (error) {
      if (attempt >= 8 || signal.aborted) throw error;
      await sleep(250 * attempt, undefined, { signal });
    }
  }
  try {
    const info = await jsm.streams.info(`KV_${name}`);
    if (info.config.num_replicas !== config.nats.replicas) {
      logger.warn(
        { bucket: name, replicas: info.config.num_replicas, configured: config.nats.replicas },
        'the NATS KV bucket has a different number of replicas than nats.replicas; left as it is',
      );
    }
  } catch {
    // The check is advisory; the bucket itself opened.
  }
  return kv;
}
