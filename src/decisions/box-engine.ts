// The decisions engine of one collector box (the single serving process, or the primary under --workers),
// started with the box's configuration; on NATS, under the cluster's lease. It runs in a thread of its own
// (engine-thread.ts, at a lower CPU priority than ingest) with its own handle on the store, so deciding never
// holds up a request: its counts come back as messages, blocks in force are counted off this process's watched
// copy of the decisions (the one the feeds serve).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { BlocklistConfig } from '../config/blocklist-schema.js';
import type { Config } from '../config/schema.js';
import { writeFileAtomic } from '../data-dir/file-owner.js';
import { DECISIONS_CURSOR } from '../store/decisions.js';
import type { Store } from '../store/store.js';
import { relogLine, startThreadModule } from '../thread-module.js';
import { waitAtMost } from '../wait-at-most.js';
import { activeBlocks, type EngineCounts, type RunningEngine, startDecisionEngine } from './engine.js';

const BOX_ID_FILE = 'decisions-engine-id';

/** This collector's id (hostname and random), made once and kept in the data directory. */
export function boxId(dataDir: string): string {
  const path = join(dataDir, BOX_ID_FILE);
  let id = '';
  try {
    id = readFileSync(path, 'utf8').trim();
  } catch {
    // First start: made below.
  }
  if (!/^[A-Za-z0-9_-]{1,60}$/.test(id)) {
    id = `${hostname()
      .replace(/[^A-Za-z0-9_-]/g, '-')
      .slice(0, 40)}-${randomBytes(4).toString('hex')}`;
    writeFileAtomic(path, `${id}\n`, 0o644, null);
  }
  return id;
}

/** A lease outlives its holder by this much: a collector that died is replaced within it. */
const LEASE_TTL_MS = 15_000;

/**
 * The engine's thread runs this many nice levels below ingest (Linux keeps one per thread). Fewer than the
 * outputs' (OUTPUTS_NICE, +15): blocks are what the engine is for, and at +15 two busy processes of the box's
 * own (nice 0) left it ~3 % of a core, so blocks came tens of seconds late; at +5 it keeps ~25 % of a core it
 * shares with one, and ingest still goes first.
 */
export const ENGINE_NICE = 5;
/** How long stop waits for the engine to finish its batch and hand on its lease before the thread is ended. */
const STOP_MS = 3000;
/** A thread that ran this long is started again after the shortest wait when it ends. */
const STABLE_MS = 60_000;

export interface EngineThreadData {
  nice: number;
  config: Config;
  dataDir: string;
  level: string;
}

export type EngineCall =
  | { op: 'configure'; blocklist: BlocklistConfig }
  | { op: 'level'; level: string }
  | { op: 'stop' };

export type EngineMessage =
  | { t: 'log'; line: string }
  | { t: 'counts'; counts: Omit<EngineCounts, 'active'> }
  | { t: 'stopped' };

/** The engine of this box, run in the thread that `store` (opened there) reads and writes for. */
export function runBoxEngine(options: {
  config: Config;
  dataDir: string;
  store: Pick<Store, 'outputs' | 'decisions' | 'reader'>;
  logger: Logger;
  onWrite?: () => void;
}): RunningEngine {
  // NATS: one engine per cluster, the holder of the lease, reading the one shared cursor (a durable consumer:
  // what a leader that died had not acknowledged is handed to the next).
  const nats = options.config.store.backend === 'nats';
  return startDecisionEngine({
    store: options.store,
    blocklist: options.config.blocklist,
    cursor: DECISIONS_CURSOR,
    ...(nats ? { lease: { holder: boxId(options.dataDir), ttlMs: LEASE_TTL_MS } } : {}),
    logger: options.logger,
    ...(options.onWrite ? { onWrite: options.onWrite } : {}),
  });
}

/** The engine in its thread: configure and stop as messages, its counts and log lines back. */
export function startBoxEngine(options: {
  config: Config;
  dataDir: string;
  /** This process's (watched) decisions: blocks in force are counted off them. */
  store: Pick<Store, 'decisions'>;
  logger: Logger;
  now?: () => number;
}): RunningEngine {
  const { logger } = options;
  let config = options.config;
  type ThreadCounts = Omit<EngineCounts, 'active'>;
  const none = (): ThreadCounts => ({
    tracked: 0,
    dropped: 0,
    blocksMade: {},
    skippedPrivate: 0,
    skippedAllowed: 0,
    skippedFull: 0,
  });
  // The running thread's counts, and the totals of the threads that ended before it: a thread started again
  // counts from 0, and /metrics's counters must not go back.
  let counts = none();
  const ended = none();
  const total = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
    const sum = { ...a };
    for (const [rule, n] of Object.entries(b)) sum[rule] = (sum[rule] ?? 0) + n;
    return sum;
  };
  const active = activeBlocks(options.now ?? Date.now);
  const watch = options.store.decisions.watch(
    (state) => active.delivered(state),
    // The engine's thread logs its own failures to read them.
    () => {},
  );
  let thread: Worker | null = null;
  let stopping = false;
  let failures = 0;
  let restart: NodeJS.Timeout | undefined;
  let stopped: () => void = () => {};

  const onLevel = (level: string) => thread?.postMessage({ op: 'level', level } satisfies EngineCall);
  logger.on('level-change', onLevel);

  const spawn = () => {
    const workerData: EngineThreadData = {
      nice: ENGINE_NICE,
      config,
      dataDir: options.dataDir,
      level: logger.level,
    };
    const started = Date.now();
    const current = startThreadModule(import.meta.url, 'engine-thread', {
      workerData,
      name: 'threatcol decisions',
    });
    thread = current;
    let failure: string | null = null;
    current.on('message', (message: EngineMessage) => {
      if (message.t === 'log') relogLine(logger, message.line);
      else if (message.t === 'counts') counts = message.counts;
      else stopped();
    });
    current.on('error', (error) => {
      failure = error instanceof Error ? error.message : String(error);
    });
    current.on('exit', (code) => {
      if (thread === current) thread = null;
      ended.dropped += counts.dropped;
      ended.skippedPrivate += counts.skippedPrivate;
      ended.skippedAllowed += counts.skippedAllowed;
      ended.skippedFull += counts.skippedFull;
      ended.blocksMade = total(ended.blocksMade, counts.blocksMade);
      counts = none();
      stopped();
      if (stopping) return;
      // Started again, reading on from its durable cursor as after a restart; one that keeps dying waits longer.
      failures = Date.now() - started >= STABLE_MS ? 1 : failures + 1;
      const waitMs = Math.min(60_000, 1000 * 2 ** (failures - 1));
      logger.error(
        { err: failure ?? `the decisions thread exited with code ${code}`, retryInMs: waitMs },
        'decisions engine stopped; starting it again',
      );
      restart = setTimeout(() => {
        restart = undefined;
        if (!stopping) spawn();
      }, waitMs).unref();
    });
  };
  // Without a rule the engine does nothing: its thread starts with the first rule.
  const hasRules = () => Object.keys(config.blocklist.rules).length > 0;
  if (hasRules()) spawn();

  return {
    configure(blocklist) {
      config = { ...config, blocklist };
      if (thread) thread.postMessage({ op: 'configure', blocklist } satisfies EngineCall);
      else if (!stopping && restart === undefined && hasRules()) spawn();
    },
    counts: () => ({
      tracked: counts.tracked,
      dropped: ended.dropped + counts.dropped,
      blocksMade: total(ended.blocksMade, counts.blocksMade),
      skippedPrivate: ended.skippedPrivate + counts.skippedPrivate,
      skippedAllowed: ended.skippedAllowed + counts.skippedAllowed,
      skippedFull: ended.skippedFull + counts.skippedFull,
      active: active.count(),
    }),
    async stop() {
      stopping = true;
      clearTimeout(restart);
      logger.off('level-change', onLevel);
      watch.stop();
      const current = thread;
      if (!current) return;
      const done = new Promise<void>((resolve) => {
        stopped = resolve;
      });
      current.postMessage({ op: 'stop' } satisfies EngineCall);
      let ended = false;
      await waitAtMost(
        done.then(() => {
          ended = true;
        }),
        STOP_MS,
      );
      if (!ended)
        logger.warn(
          { limitMs: STOP_MS },
          'the decisions engine did not stop in time (a store that does not answer): its thread is ended, and on NATS its lease passes on when it expires',
        );
      await current.terminate();
    },
  };
}
