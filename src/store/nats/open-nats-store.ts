// The NATS JetStream backend (DESIGN 10): one connection shared by the record log, registry, stats and
// reader; the stream and buckets are created when missing.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import { writeFileAtomic } from '../../data-dir/file-owner.js';
import { parseStoredRecord } from '../record-shape.js';
import { createSkippedRecords } from '../skipped-records.js';
import type { Store, StoreHealth, StoreWriterOptions } from '../store.js';
import { createNatsDecisions } from './nats-decisions.js';
import { NatsLink } from './nats-link.js';
import { createNatsOutputCursors } from './nats-output-cursors.js';
import { createNatsReader } from './nats-reader.js';
import { createNatsRecordLog } from './nats-record-log.js';
import { createNatsRegistry } from './nats-registry.js';
import { ensureBucket, ensureStream } from './nats-setup.js';
import { createNatsStats } from './nats-stats.js';
import { PublishPipeline } from './publish-pipeline.js';

export interface NatsStoreDeps {
  logger: Logger;
  now?: () => number;
  /** Where this collector's id is kept (daemon); null: a reader that writes no stats (CLI). */
  dataDir?: string | null;
  /** Outputs' consumers' ack_wait (tests shorten it to see a dead collector's batch redelivered). */
  outputAckWaitMs?: number;
}

const COLLECTOR_ID_FILE = 'collector-id';

/**
 * A collector's id in the stats bucket: generated once (hostname + random) and kept in the data directory,
 * so a restart continues its own counters and two collectors on one host never share a key.
 */
export function collectorId(dataDir: string): string {
  const path = join(dataDir, COLLECTOR_ID_FILE);
  try {
    const id = readFileSync(path, 'utf8').trim();
    if (id) return id;
  } catch {
    // First start: make one below.
  }
  const id = `${hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 40)}-${randomBytes(4).toString('hex')}`;
  writeFileAtomic(path, `${id}\n`, 0o644, null);
  return id;
}

export async function openNatsStore(config: Config, deps: NatsStoreDeps): Promise<Store> {
  const { logger } = deps;
  const nats = config.nats;
  const link = new NatsLink({ nats, logger, ...(deps.now ? { now: deps.now } : {}) });
  link.start();

  let clients: { js: JetStreamClient; jsm: JetStreamManager } | null = null;
  const buckets = new Map<string, Promise<KV>>();
  let streamReady: Promise<void> | null = null;
  /** Aborted by close(): what still retries in the background (a bucket's creation) stops with the store. */
  const closing = new AbortController();

  async function getClients(timeoutMs = nats.publishTimeoutMs) {
    const nc = await link.ready(timeoutMs);
    clients ??= { js: jetstream(nc, { timeout: nats.publishTimeoutMs }), jsm: await jetstreamManager(nc) };
    return clients;
  }

  /** Opens (creating when missing) a bucket once; a failure is retried at the next call. */
  function bucket(name: string, history: number): () => Promise<KV> {
    return () => {
      let kv = buckets.get(name);
      if (!kv) {
        kv = getClients().then(({ js, jsm }) =>
          ensureBucket(js, jsm, name, config, logger, history, closing.signal),
        );
        kv.catch(() => buckets.delete(name));
        buckets.set(name, kv);
      }
      return kv;
    };
  }

  function ensureRecordsStream(): Promise<void> {
    if (!streamReady) {
      streamReady = getClients().then(({ jsm }) => ensureStream(jsm, config, logger));
      streamReady.catch(() => {
        streamReady = null;
      });
    }
    return streamReady;
  }

  const dataDir = deps.dataDir ?? null;
  let id: string | null = null;
  const why = () => (link.current() ? null : link.reason());
  const registry = createNatsRegistry({
    bucket: bucket(nats.registryBucket, 5),
    name: nats.registryBucket,
    waitMs: nats.publishTimeoutMs,
    why,
    logger,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const stats = createNatsStats({
    bucket: bucket(nats.statsBucket, 1),
    name: nats.statsBucket,
    waitMs: nats.publishTimeoutMs,
    why,
    collectorId: () => {
      if (dataDir === null) return null;
      id ??= collectorId(dataDir);
      return id;
    },
  });
  const skipped = createSkippedRecords(logger);
  const reader = createNatsReader({
    stream: nats.stream,
    skipped,
    clients: async () => {
      await ensureRecordsStream();
      return getClients();
    },
  });

  const outputs = createNatsOutputCursors({
    stream: nats.stream,
    clients: async () => {
      await ensureRecordsStream();
      return getClients();
    },
    connection: () => link.ready(nats.publishTimeoutMs),
    state: bucket(nats.outputsBucket, 1),
    logger,
    skipped,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.outputAckWaitMs ? { ackWaitMs: deps.outputAckWaitMs } : {}),
  });

  return {
    backend: 'nats',
    registry,
    reader,
    stats,
    outputs,
    decisions: createNatsDecisions({
      name: config.blocklist.bucket,
      // On a client of its own whose requests give up after `requestTimeoutMs`: a read waiting through an
      // election asks again rather than wait publishTimeoutMs for a request the cluster lost.
      open: async (requestTimeoutMs) => {
        const nc = await link.ready(nats.publishTimeoutMs);
        const js = jetstream(nc, { timeout: requestTimeoutMs });
        const jsm = await js.jetstreamManager(false);
        return ensureBucket(js, jsm, config.blocklist.bucket, config, logger, 1, closing.signal);
      },
      waitMs: nats.publishTimeoutMs,
      why,
    }),
    async openRecordLog(options: StoreWriterOptions = {}) {
      // Created in the background: serve starts (and answers 503) while NATS is down.
      const setUp = () =>
        ensureRecordsStream().catch((error: Error) => {
          logger.warn({ err: error.message }, 'cannot check the NATS stream yet; retrying');
          setTimeout(setUp, 2000).unref();
        });
      void setUp();
      let pipeline: PublishPipeline | null = null;
      const log = createNatsRecordLog({
        link,
        publisher: () => {
          // Only while connected: a publish buffered during a reconnect could be stored after its request was
          // answered 503, which the sender then retries (a second copy).
          const nc = link.current();
          if (!nc) return null;
          if (pipeline?.connection !== nc) {
            pipeline?.close();
            pipeline = new PublishPipeline(nc);
          }
          return pipeline;
        },
        firstDelivery: async (seq) => {
          const { jsm } = await getClients();
          const msg = await jsm.streams.getMessage(nats.stream, { seq });
          if (!msg) throw new Error(`message ${seq} is gone from stream ${nats.stream}`);
          // Another publisher may have used the message id first: its message need not be a record at all.
          const record = parseStoredRecord(msg.string());
          if (!record) throw new Error(`message ${seq} holding this message id is not a threatcol record`);
          return record;
        },
        publishTimeoutMs: nats.publishTimeoutMs,
        dedupe: config.dedupe.windowSeconds > 0,
        logger,
        ...(deps.now ? { now: deps.now } : {}),
        ...(options.onBatchSynced ? { onBatchSynced: options.onBatchSynced } : {}),
      });
      return {
        append: (records, appendOptions) => log.append(records, appendOptions),
        get queuedRecords() {
          return log.queuedRecords;
        },
        async close() {
          await log.close();
          pipeline?.close();
        },
      };
    },
    async health(options = {}): Promise<StoreHealth> {
      try {
        await link.ready(options.waitMs ?? 0);
      } catch {
        return { ok: false, reason: link.reason() };
      }
      try {
        // Like the readers, health creates the stream when missing: ready means an append would be stored.
        await ensureRecordsStream();
        const { jsm } = await getClients(1000);
        await jsm.streams.info(nats.stream);
        return { ok: true };
      } catch (error) {
        return {
          ok: false,
          reason: `NATS stream ${nats.stream} unreachable: ${(error as Error).message}`,
        };
      }
    },
    async close() {
      closing.abort(new Error('the store is closed'));
      skipped.flush();
      await link.close();
    },
  };
}
