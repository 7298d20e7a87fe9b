// Outputs' durable positions on NATS (DESIGN 13): one durable pull consumer per output on the records stream
// (`threatcol_out_<name>`, explicit acks), its bookkeeping in the outputs bucket; list, replay and forget.
import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerInfo,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { type NatsConnection, nanos } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { isOutputName } from '../decisions.js';
import type { SkippedRecords } from '../skipped-records.js';
import type { OutputCursors, OutputFeedOptions, OutputPosition } from '../store.js';
import { outputConsumerName, parseOutputConsumer, RECORDS_PREFIX } from './names.js';
import { createNatsOutputFeed } from './nats-output-feed.js';
import { OutputPuller } from './output-pull.js';
import { countSkipped, forgetOutputState, readOutputState, recordAcked, uncounted } from './output-state.js';

export interface NatsOutputCursorsOptions {
  stream: string;
  /** Resolves once NATS is reachable and the records stream exists (rejects UNAVAILABLE otherwise). */
  clients: () => Promise<{ js: JetStreamClient; jsm: JetStreamManager }>;
  connection: () => Promise<NatsConnection>;
  /** The outputs bucket (created when missing). */
  state: () => Promise<KV>;
  logger: Logger;
  /** Where messages that are not stored records are counted (the store's, shared with its reader). */
  skipped?: SkippedRecords;
  now?: () => number;
  /**
   * The consumers' ack_wait: how long a dead collector's batch waits before another collector gets it. A live
   * collector marks its batch in progress meanwhile, so a slow receiver never causes a redelivery.
   */
  ackWaitMs?: number;
}

export const DEFAULT_OUTPUT_ACK_WAIT_MS = 30_000;
/** Deliveries not yet acknowledged, across every collector of an output (bounds what a death re-delivers). */
const MAX_ACK_PENDING = 100_000;
const REPLAY_ATTEMPTS = 5;

/** JetStream's "consumer not found" (10014), whichever way the client reports it. */
function isConsumerMissing(error: unknown): boolean {
  const e = error as { code?: unknown; message?: string; api_error?: { err_code?: number } } | null;
  return (
    e?.code === 10014 || e?.api_error?.err_code === 10014 || /consumer not found/i.test(e?.message ?? '')
  );
}

export function createNatsOutputCursors(options: NatsOutputCursorsOptions): OutputCursors {
  const { stream, logger } = options;
  const now = options.now ?? Date.now;
  const ackWaitMs = options.ackWaitMs ?? DEFAULT_OUTPUT_ACK_WAIT_MS;

  function consumerConfig(name: string, start: 'now' | number, generation = 0): Partial<ConsumerConfig> {
    return {
      durable_name: outputConsumerName(name, generation),
      description: `threatcol output ${name}`,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      max_deliver: -1,
      max_ack_pending: MAX_ACK_PENDING,
      filter_subject: `${RECORDS_PREFIX}.>`,
      ...(start === 'now'
        ? { deliver_policy: DeliverPolicy.New }
        : { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(start).toISOString() }),
    };
  }

  /**
   * Every output's consumer names, the latest generation first (a replay makes the next, then deletes the rest).
   * Names, not infos: JetStream lists the names it has assigned, also of a consumer electing a leader.
   */
  async function outputConsumers(): Promise<Map<string, string[]>> {
    const nc = await options.connection();
    const found: { output: string; generation: number; name: string }[] = [];
    for (let offset = 0; ; ) {
      const reply = (
        await nc.request(`$JS.API.CONSUMER.NAMES.${stream}`, JSON.stringify({ offset }), { timeout: 5000 })
      ).json<{ consumers?: string[] | null; total?: number; error?: { description?: string } }>();
      if (reply.error) throw new Error(`cannot list the consumers: ${reply.error.description}`);
      const names = reply.consumers ?? [];
      for (const name of names) {
        const parsed = parseOutputConsumer(name);
        if (parsed) found.push({ ...parsed, name });
      }
      offset += names.length;
      if (names.length === 0 || offset >= (reply.total ?? 0)) break;
    }
    found.sort((x, y) => y.generation - x.generation);
    const byOutput = new Map<string, string[]>();
    for (const f of found) byOutput.set(f.output, [...(byOutput.get(f.output) ?? []), f.name]);
    return byOutput;
  }

  /** The output's consumer, made when missing; one made meanwhile by another collector (or a replay) wins. */
  async function ensureConsumer(name: string, start: 'now' | number): Promise<ConsumerInfo> {
    const { jsm } = await options.clients();
    const latest = async () => {
      const current = (await outputConsumers()).get(name)?.[0];
      return current === undefined ? undefined : jsm.consumers.info(stream, current);
    };
    const current = await latest();
    if (current) return current;
    try {
      const info = await jsm.consumers.add(stream, consumerConfig(name, start));
      logger.info({ output: name, consumer: info.name, start }, 'created the output consumer in NATS');
      return info;
    } catch (error) {
      const made = await latest().catch(() => undefined);
      if (made) return made;
      throw error;
    }
  }

  /**
   * Counts what retention removed before the consumer delivered it: JetStream moves the consumer past such
   * records without a word. Checked before each pull (the pull is what moves the consumer); `seenThrough`, the
   * last sequence this collector was handed, spares the consumer's info while the stream starts before it.
   */
  async function checkSkipped(name: string, consumerName: string, seenThrough: number): Promise<void> {
    const { jsm } = await options.clients();
    const info = await jsm.streams.info(stream);
    if (info.state.first_seq - 1 <= seenThrough) return;
    const consumer = await jsm.consumers.info(stream, consumerName);
    const goneThrough = info.state.first_seq - 1;
    const delivered = consumer.delivered.stream_seq;
    if (goneThrough <= delivered) return;
    const added = await countSkipped(await options.state(), name, delivered, goneThrough);
    if (added > 0) {
      logger.warn(
        { output: name, records: added, throughSeq: goneThrough },
        'retention removed records this output had not forwarded yet (the stream limits win on NATS): skipped',
      );
    }
  }

  async function position(consumer: ConsumerInfo, first: number, last: number): Promise<OutputPosition> {
    const name = parseOutputConsumer(consumer.name)?.output as string;
    const { jsm } = await options.clients();
    const state = await readOutputState(await options.state(), name);
    const floor = consumer.ack_floor.stream_seq;
    const lagRecords = consumer.num_pending + consumer.num_ack_pending;
    let lagSeconds = 0;
    // The oldest record not acknowledged is the first one after the ack floor still in the stream.
    const oldest = Math.max(floor + 1, first);
    if (lagRecords > 0 && oldest <= last) {
      const msg = await jsm.streams.getMessage(stream, { seq: oldest }).catch(() => null);
      if (msg) lagSeconds = Math.max(0, (now() - msg.time.getTime()) / 1000);
    }
    return {
      name,
      position: `seq ${floor}`,
      lastId: state.acked?.lastId ?? null,
      lagRecords,
      lagSeconds,
      skippedRecords:
        state.skipped.records + uncounted(state.skipped, consumer.delivered.stream_seq, first - 1),
    };
  }

  return {
    async openFeed(feedOptions: OutputFeedOptions) {
      const { name } = feedOptions;
      const asked = feedOptions.startAt ?? 'now';
      /** Where a consumer made by this feed starts. */
      let start: 'now' | number = asked;
      let puller: { nc: NatsConnection; consumer: string; puller: OutputPuller } | null = null;
      /** The consumer pulled from; null once it is found gone (a replay made the next generation). */
      let consumer: string | null = null;
      // Made now, so 'now' means now. NATS down (or a cluster still electing, or a consumer limit reached) only
      // delays the making: 'now' is then the time of this first attempt, so the records stored until the
      // consumer can be made are delivered too (by the stream's clock, which a collector's should be close to).
      const attemptedAt = now();
      await ensureConsumer(name, start).then(
        (info) => {
          consumer = info.name;
        },
        (error: Error) => {
          if (asked === 'now') start = attemptedAt;
          logger.warn(
            { output: name, err: error.message, start: new Date(attemptedAt).toISOString() },
            'cannot open the output consumer in NATS yet; retrying, from the time of this attempt',
          );
        },
      );
      return createNatsOutputFeed({
        name,
        ...(feedOptions.match ? { match: feedOptions.match } : {}),
        check: feedOptions.check ?? 'record',
        async puller() {
          const nc = await options.connection();
          if (consumer === null) {
            consumer = (await ensureConsumer(name, start)).name;
            // Made (or found): one made again later (after `outputs forget`) starts at its own 'now'.
            start = asked;
          }
          if (puller?.nc !== nc || puller.consumer !== consumer) {
            // A batch still held keeps the puller it came from: its acks go to its own consumer, or nowhere.
            puller?.puller.close();
            puller = { nc, consumer, puller: new OutputPuller(nc, stream, consumer) };
          }
          return puller.puller;
        },
        consumerGone: () => {
          consumer = null;
        },
        dispose: () => puller?.puller.close(),
        beforePull: (seenThrough) =>
          checkSkipped(name, puller?.consumer ?? outputConsumerName(name), seenThrough),
        onAcked: async (last, seq) =>
          recordAcked(await options.state(), name, {
            lastId: last.id,
            seq,
            at: new Date(now()).toISOString(),
          }),
        ackWaitMs,
        ackTimeoutMs: Math.min(ackWaitMs, 10_000),
        ...(feedOptions.onTrouble ? { onTrouble: feedOptions.onTrouble } : {}),
        logger,
        ...(options.skipped ? { skipped: options.skipped } : {}),
      });
    },

    async list() {
      const { jsm } = await options.clients();
      const { state } = await jsm.streams.info(stream);
      const consumers = await Promise.all(
        // The decisions engine's cursor (decisions.ts) is not an output's.
        [...(await outputConsumers())]
          .filter(([output]) => isOutputName(output))
          .map(([, names]) => jsm.consumers.info(stream, names[0] as string)),
      );
      const positions = await Promise.all(consumers.map((c) => position(c, state.first_seq, state.last_seq)));
      return positions.sort((a, b) => a.name.localeCompare(b.name));
    },

    async replay(name, since) {
      // A consumer's start cannot be changed, and one made again under the same name would take the acks of
      // batches handed out before (an ack names only stream, consumer and sequences): a collector acking such a
      // batch after the new consumer handed the same records out again would settle that delivery, and a
      // collector dying with it would skip them. So the next generation is made, then the older ones deleted:
      // their batches' acks reach nobody, and feeds move to the latest when their pull finds the old one gone.
      const { jsm } = await options.clients();
      for (let attempt = 1; ; attempt++) {
        const older = (await outputConsumers()).get(name) ?? [];
        const generation = (parseOutputConsumer(older[0] ?? '')?.generation ?? -1) + 1;
        try {
          await jsm.consumers.add(stream, consumerConfig(name, since, generation));
        } catch (error) {
          // Another replay made that generation meanwhile: the next round makes the one after.
          if (attempt >= REPLAY_ATTEMPTS) throw error;
          continue;
        }
        for (const consumer of older) {
          await jsm.consumers.delete(stream, consumer).catch((error: unknown) => {
            if (!isConsumerMissing(error)) throw error;
          });
        }
        logger.info({ output: name, since: new Date(since).toISOString() }, 'output moved back (replay)');
        return;
      }
    },

    async forget(name) {
      const { jsm } = await options.clients();
      let existed = false;
      for (const consumer of (await outputConsumers()).get(name) ?? []) {
        existed =
          (await jsm.consumers.delete(stream, consumer).then(
            () => true,
            (error: unknown) => {
              if (isConsumerMissing(error)) return false;
              throw error;
            },
          )) || existed;
      }
      await forgetOutputState(await options.state(), name);
      return existed;
    },
  };
}
