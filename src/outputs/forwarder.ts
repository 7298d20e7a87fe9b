// One output's forwarder: feed.next → receiver.send → dead letters → ack, forever. Transient failures hold the
// cursor and retry with backoff; a refused credential pauses the output and retries slowly; nothing is dropped.
import type { Logger } from 'pino';
import type { OutputConfig } from '../config/outputs-schema.js';
import type { Owner } from '../data-dir/file-owner.js';
import type { OutputBatch, OutputCursors, OutputFeed } from '../store/store.js';
import { createBackoff, sleep } from './backoff.js';
import { appendDeadLetters, lastDeadLetterIds } from './dead-letter.js';
import { newStatus, type OutputStatus } from './output-status.js';
import { createReceiver, lineCheck } from './receivers/create-receiver.js';
import { AuthDeliveryError, type OutgoingRecord, type Pacing, type Receiver } from './receivers/receiver.js';
import { outputMatcher } from './record-match.js';

export interface ForwarderDeps {
  name: string;
  output: OutputConfig;
  cursors: OutputCursors;
  dataDir: string;
  owner: Owner | null;
  logger: Logger;
  env: Record<string, string | undefined>;
  now: () => number;
  /** Backoff bounds; defaults 1 s → the output's retryMaxMs, paused outputs every 60 s (or retryMaxMs). */
  retryBaseMs?: number;
  retryCapMs?: number;
  pausedRetryMs?: number;
  /** Called after each acked batch with the records it delivered (metrics). */
  onDelivered?: (records: number) => void;
  /** The output's pacing (email's last mail), kept by start-outputs across reloads; default: this forwarder's. */
  pacing?: Pacing;
}

export interface Forwarder {
  readonly status: OutputStatus;
  /**
   * Settles once the output's feed has been opened the first time (its start, "now" for a new output, is then
   * fixed and durable), or that first attempt failed: serve waits for it, bounded, before taking records.
   */
  readonly started: Promise<void>;
  /** Stops at the next safe point: an unacked batch is sent again by the next start. */
  stop(): Promise<void>;
  /** Retries a paused or backing-off output now (SIGHUP). */
  poke(): void;
}

const NONE: ReadonlySet<string> = new Set();

export function startForwarder(deps: ForwarderDeps): Forwarder {
  const { name, output, logger } = deps;
  const log = logger.child({ output: name });
  const status = newStatus(name, output.type, 'starting');
  const stopping = new AbortController();
  let poke = new AbortController();
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const backoff = createBackoff({
    baseMs: deps.retryBaseMs ?? 1000,
    capMs: deps.retryCapMs ?? output.retryMaxMs,
  });
  const iso = () => new Date(deps.now()).toISOString();
  const pacing = deps.pacing ?? { lastSentAt: Number.NEGATIVE_INFINITY };
  /** Paused outputs (a refused credential, a broken feed) try again this often, or at once on a poke. */
  const slowRetryMs = deps.pausedRetryMs ?? Math.min(60_000, output.retryMaxMs);

  const failed = (state: 'retrying' | 'paused', error: Error) => {
    if (status.state !== state || status.lastError !== error.message) {
      log.warn(
        { err: error.message, state },
        state === 'paused' ? 'output paused' : 'output delivery failed; retrying',
      );
    }
    status.state = state;
    status.lastError = error.message;
    status.lastErrorAt = iso();
    status.failingSince ??= deps.now();
  };
  /** Waits before the next attempt; a poke (SIGHUP) or stop cuts it short. */
  const pause = (ms: number) => sleep(ms, AbortSignal.any([stopping.signal, poke.signal]));

  /**
   * Sends the batch until every record was taken or refused; false when stopped first. `written`: ids already
   * dead-lettered by a run that died before its ack (not written again).
   */
  const deliver = async (
    receiver: Receiver,
    records: readonly OutgoingRecord[],
    written: () => ReadonlySet<string>,
  ): Promise<boolean> => {
    let pending = records;
    while (!stopping.signal.aborted) {
      try {
        const report = await receiver.send(pending, stopping.signal);
        if (stopping.signal.aborted) return false;
        const refused = report.refused
          .map((r) => ({ record: pending[r.index] as OutgoingRecord, answer: r.answer }))
          .filter((r) => !written().has(r.record.id))
          .map((r) => ({ line: r.record.line, answer: r.answer }));
        appendDeadLetters(deps.dataDir, name, refused, iso(), deps.owner, {
          maxBytes: output.deadLetterMaxBytes,
          logger: log,
        });
        if (refused.length > 0) {
          status.deadLetters += refused.length;
          // Shown by `outputs list` as the last error: a refusal is never silent, though the output moves on.
          status.lastError = `${refused.length} records refused, dead-lettered: ${refused[0]?.answer}`;
          status.lastErrorAt = iso();
          log.warn(
            { records: refused.length, answer: refused[0]?.answer },
            'receiver refused records; dead-lettered',
          );
        }
        const sent = pending.length - report.refused.length - report.retry.length;
        status.recordsSent += sent;
        if (report.retry.length === 0) return true;
        pending = report.retry.map((i) => pending[i] as OutgoingRecord);
        status.retries += 1;
        failed('retrying', new Error(`${pending.length} records to send again`));
        await pause(backoff.next());
        poke = new AbortController();
      } catch (error) {
        if (stopping.signal.aborted) return false;
        status.retries += 1;
        if (error instanceof AuthDeliveryError) {
          failed('paused', error);
          await pause(slowRetryMs);
        } else {
          const e = error as Error & { retryAfterMs?: number | null };
          failed('retrying', e);
          await pause(backoff.next(e.retryAfterMs ?? null));
        }
        poke = new AbortController();
      }
    }
    return false;
  };

  /** One life of the receiver and the feed; throws when either fails (then `run` starts another). */
  const session = async () => {
    let receiver: Receiver | null = null;
    let feed: OutputFeed | null = null;
    try {
      // The feed first: a new output's "now" is fixed at start even when its receiver cannot be built yet.
      feed = await deps.cursors.openFeed({
        name,
        match: outputMatcher(output.filter),
        check: lineCheck(output),
        startAt: output.startAt === 'oldest' ? 0 : 'now',
      });
      markStarted();
      receiver = createReceiver(output, { env: deps.env, logger: log, pacing });
      if (status.state === 'starting') log.info({ type: output.type }, 'output started');
      // The first batch may be the one in flight when the last run died between writing its dead letters and
      // its ack: the records refused again are already among the last maxRecords dead letters.
      let firstBatch = true;
      let recentDead: ReadonlySet<string> | null = null;
      const written = (): ReadonlySet<string> => {
        if (!firstBatch) return NONE;
        recentDead ??= lastDeadLetterIds(deps.dataDir, name, output.batch.maxRecords);
        return recentDead;
      };
      status.state = status.failingSince === null ? 'running' : status.state;
      while (!stopping.signal.aborted) {
        // A receiver that paces itself (email) is given its next batch when it will take it, so that batch
        // carries every record stored meanwhile: one digest per interval, not a mail per batch.
        const readyIn = (receiver.readyAt?.() ?? 0) - deps.now();
        if (readyIn > 0) await sleep(readyIn, stopping.signal);
        if (stopping.signal.aborted) break;
        const batch: OutputBatch = await feed.next({
          maxRecords: output.batch.maxRecords,
          maxBytes: output.batch.maxBytes,
          waitMs: output.batch.maxWaitMs,
          signal: stopping.signal,
        });
        if (batch.records.length === 0) continue;
        const records: readonly OutgoingRecord[] = batch.records;
        if (!(await deliver(receiver, records, written))) return;
        // The invariant: the cursor moves only after the receiver acknowledged (or refused for good) every record.
        await batch.ack();
        firstBatch = false;
        recentDead = null;
        status.batches += 1;
        status.state = 'running';
        status.lastSuccessAt = iso();
        status.failingSince = null;
        backoff.reset();
        deps.onDelivered?.(records.length);
      }
    } finally {
      await feed?.close();
      await receiver?.close().catch(() => {});
    }
  };

  const run = async () => {
    while (!stopping.signal.aborted) {
      try {
        await session();
      } catch (error) {
        // The receiver cannot be built (a CA file missing), the feed or its cursor cannot be read or written:
        // reported, and tried again slowly; an unacked batch is handed over again by the next feed.
        markStarted();
        failed('paused', error as Error);
        await pause(slowRetryMs);
        poke = new AbortController();
      }
    }
  };
  const running = run();

  return {
    status,
    started,
    async stop() {
      stopping.abort();
      await running;
      markStarted();
    },
    poke() {
      poke.abort();
    },
  };
}
