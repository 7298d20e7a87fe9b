// One output's forwarder: feed.next → receiver.send → dead letters → ack, forever. Transient failures hold the
// cursor and retry with backoff; a refused credential pauses the output and retries slowly; nothing is dropped.
import type { Logger } from 'pino';
import { BATCH_MAX_RECORDS, type OutputConfig } from '../config/outputs-schema.js';
import type { Owner } from '../data-dir/file-owner.js';
import type { OutputBatch, OutputCursors, OutputFeed } from '../store/store.js';
import { createBackoff, sleep } from './backoff.js';
import { appendDeadLetters, deadLetterMemory } from './dead-letter.js';
import { type Grouper, groupConfig, groupStatePath, openGrouper } from './grouping.js';
import { newStatus, type OutputStatus } from './output-status.js';
import { createReceiver, lineCheck } from './receivers/create-receiver.js';
import {
  AuthDeliveryError,
  type DeliveryReport,
  type OutgoingRecord,
  type Pacing,
  type Receiver,
} from './receivers/receiver.js';
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

/**
 * Ids of dead-lettered records whose batch is not known acked, kept at most (the oldest go first): the last run's
 * last batch and this run's, each as large as allowed.
 */
const DEAD_IDS_MAX = 2 * BATCH_MAX_RECORDS;

/** A stored line's record id. */
const idOf = (line: string): string => (JSON.parse(line) as { id: string }).id;

/** The longest a Node timer waits (ms): 2^31 - 1. */
const MAX_TIMER_MS = 2_147_483_647;

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
  /**
   * Records dead-lettered in batches (or summaries) not yet acked: such a batch handed over again, whenever it
   * comes (a restart, a failed ack; on NATS behind newer batches), does not write them twice.
   */
  const dead = deadLetterMemory(deps.dataDir, name, { count: output.batch.maxRecords, max: DEAD_IDS_MAX });
  /** Paused outputs (a refused credential, a broken feed) try again this often, or at once on a poke. */
  const slowRetryMs = deps.pausedRetryMs ?? Math.min(60_000, output.retryMaxMs);

  /** The status of an output failing with `error` (since the first failure of the streak). */
  const failing = (state: 'retrying' | 'paused', error: Error) => {
    status.state = state;
    status.lastError = error.message;
    status.lastErrorAt = iso();
    status.failingSince ??= deps.now();
  };
  const failed = (state: 'retrying' | 'paused', error: Error) => {
    if (status.state !== state || status.lastError !== error.message) {
      log.warn(
        { err: error.message, state },
        state === 'paused' ? 'output paused' : 'output delivery failed; retrying',
      );
    }
    failing(state, error);
  };
  /**
   * The feed cannot read the store and retries by itself (NATS unreachable, its consumer not made yet): the
   * output is retrying with that error until the feed reads again (the feed logs it).
   */
  let troubled = false;
  const readTrouble = (error: Error | null) => {
    if (error !== null) {
      troubled = true;
      failing('retrying', error);
    } else if (troubled) {
      troubled = false;
      status.state = 'running';
      status.failingSince = null;
    }
  };
  /** Waits before the next attempt; a poke (SIGHUP) or stop cuts it short. */
  const pause = (ms: number) => sleep(ms, AbortSignal.any([stopping.signal, poke.signal]));

  /**
   * Sends the batch until every record was taken or refused; false when stopped first. A record `dead` holds was
   * dead-lettered by a batch not acked (not written again). The items are records, or group
   * summaries (`letters`: the records a refused item leaves in the dead letters; `weight`: records it carries).
   */
  const deliver = async <T>(
    items: readonly T[],
    send: (pending: readonly T[], signal: AbortSignal) => Promise<DeliveryReport>,
    letters: (item: T) => readonly { id: string; line: string }[],
    weight: (item: T) => number,
    kind: 'records' | 'summaries',
  ): Promise<boolean> => {
    let pending = items;
    while (!stopping.signal.aborted) {
      try {
        const report = await send(pending, stopping.signal);
        if (stopping.signal.aborted) return false;
        const refused = report.refused
          .flatMap((r) => letters(pending[r.index] as T).map((record) => ({ record, answer: r.answer })))
          .filter((r) => !dead.has(r.record.id));
        appendDeadLetters(
          deps.dataDir,
          name,
          refused.map((r) => ({ line: r.record.line, answer: r.answer })),
          iso(),
          deps.owner,
          { maxBytes: output.deadLetterMaxBytes, logger: log },
        );
        for (const r of refused) dead.add(r.record.id);
        status.deadLetters += refused.length;
        // Shown by `outputs list` as the last error: a refusal is never silent, though the output moves on.
        if (kind === 'summaries' && report.refused.length > 0) {
          // A summary's count lives nowhere else: said in the log, the last error and a counter, with or
          // without samples to dead-letter.
          const answer = report.refused[0]?.answer;
          const counted = report.refused.reduce((n, r) => n + weight(pending[r.index] as T), 0);
          status.groupRefused += counted;
          status.lastError = `${report.refused.length} group summaries of ${counted} records refused, ${refused.length} samples dead-lettered: ${answer}`;
          status.lastErrorAt = iso();
          log.warn(
            { summaries: report.refused.length, records: counted, samples: refused.length, answer },
            'receiver refused group summaries; their samples dead-lettered',
          );
        } else if (refused.length > 0) {
          status.lastError = `${refused.length} records refused, dead-lettered: ${refused[0]?.answer}`;
          status.lastErrorAt = iso();
          log.warn(
            { records: refused.length, answer: refused[0]?.answer },
            'receiver refused records; dead-lettered',
          );
        }
        const gone = new Set([...report.retry, ...report.refused.map((r) => r.index)]);
        for (const [index, item] of pending.entries())
          if (!gone.has(index)) status.recordsSent += weight(item);
        if (report.retry.length === 0) return true;
        pending = report.retry.map((i) => pending[i] as T);
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
  const deliverRecords = (receiver: Receiver, records: readonly OutgoingRecord[]) =>
    deliver(
      records,
      (pending, signal) => receiver.send(pending, signal),
      (r) => [r],
      () => 1,
      'records',
    );

  /**
   * Sends the summaries of the windows that ended, then writes the open groups: false when stopped first (the
   * state unwritten, so the next start sends them again). Refused summaries leave their samples as dead letters.
   */
  const flushGroups = async (receiver: Receiver, grouper: Grouper): Promise<boolean> => {
    const now = deps.now();
    const due = grouper.due(now);
    const quiet = grouper.closeQuiet(now);
    if (due.length > 0) {
      const sent = await deliver(
        due,
        (pending, signal) =>
          (receiver.sendSummaries as NonNullable<Receiver['sendSummaries']>)(pending, signal),
        (summary) => summary.samples.map((line) => ({ id: idOf(line), line })),
        (summary) => summary.count,
        'summaries',
      );
      if (!sent) return false;
      for (const summary of due) grouper.settle(summary, deps.now());
    }
    if (due.length > 0 || quiet > 0) grouper.save();
    // Saved: the summaries are not sent again, nor are their samples refused again.
    for (const summary of due) dead.settled(summary.samples.map((line) => ({ id: idOf(line) })));
    return true;
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
        onTrouble: readTrouble,
      });
      markStarted();
      receiver = createReceiver(output, { env: deps.env, logger: log, pacing });
      if (status.state === 'starting') log.info({ type: output.type }, 'output started');
      status.state = status.failingSince === null ? 'running' : status.state;
      const grouping = groupConfig(output);
      const grouper =
        grouping === null
          ? null
          : openGrouper(grouping, groupStatePath(deps.dataDir, name), deps.owner, (message) =>
              log.warn(message),
            );
      while (!stopping.signal.aborted) {
        if (grouper !== null) {
          if (!(await flushGroups(receiver, grouper))) return;
          reportOverflow(grouper);
        }
        // A receiver that paces itself (email) is given its next batch when it will take it, so that batch
        // carries every record stored meanwhile: one digest per interval, not a mail per batch.
        const readyIn = (receiver.readyAt?.() ?? 0) - deps.now();
        if (readyIn > 0) await sleep(readyIn, stopping.signal);
        if (stopping.signal.aborted) break;
        // A grouped output wakes at the end of its next window to send that window's summary; a window longer
        // than a timer can wait (24.8 days: past it Node fires at once, or throws) wakes it early, to wait again.
        const windowEnd = grouper?.nextEnd() ?? null;
        const batch: OutputBatch = await feed.next({
          maxRecords: output.batch.maxRecords,
          maxBytes: output.batch.maxBytes,
          waitMs: output.batch.maxWaitMs,
          signal:
            windowEnd === null
              ? stopping.signal
              : AbortSignal.any([
                  stopping.signal,
                  AbortSignal.timeout(Math.min(MAX_TIMER_MS, Math.max(1, windowEnd - deps.now()))),
                ]),
        });
        if (batch.records.length === 0) continue;
        const records: readonly OutgoingRecord[] = batch.records;
        // Grouped: only the records that open a group are sent now; the others are counted into their group's
        // summary, and the groups are written before the ack (grouping.ts: what a crash does at each step).
        const now = grouper?.absorb(records, deps.now()) ?? records;
        if (now.length > 0 && !(await deliverRecords(receiver, now))) return;
        grouper?.save();
        // The invariant: the cursor moves only after the receiver acknowledged (or refused for good) every record.
        await batch.ack();
        grouper?.acked(records);
        dead.settled(records);
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

  /** Records of new groups past group.maxGroups: counted (metrics) and logged at most once a minute. */
  let overflowLoggedAt = Number.NEGATIVE_INFINITY;
  const reportOverflow = (grouper: Grouper) => {
    const more = grouper.takeOverflowed();
    if (more === 0) return;
    status.groupOverflow += more;
    if (deps.now() - overflowLoggedAt < 60_000) return;
    overflowLoggedAt = deps.now();
    log.warn(
      { records: status.groupOverflow, maxGroups: groupConfig(output)?.maxGroups },
      'records of new groups past group.maxGroups are counted in one overflow group',
    );
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
