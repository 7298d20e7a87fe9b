// The box's outputs (DESIGN 13), behind one RunningOutputs: while any output is enabled they run in a worker
// thread of their own (outputs-thread.ts) at a lower CPU priority, so forwarding never takes the event loop
// that takes records, its garbage is collected apart, and a saturated core serves ingest first (the outputs'
// lag grows instead: docs/operations.md, "Where forwarding runs"). With none enabled no thread is started:
// start-outputs.ts in this thread reports the disabled outputs and the cursors left behind. A thread that
// dies is logged and started again, its forwarders resuming from their durable cursors as after a restart.
import type { Worker } from 'node:worker_threads';
import type { OutputConfig } from '../config/outputs-schema.js';
import type { Config } from '../config/schema.js';
import type { Owner } from '../data-dir/file-owner.js';
import type { OutputMetricRow } from '../metrics/output-metrics.js';
import { relogLine, startThreadModule } from '../thread-module.js';
import { waitAtMost } from '../wait-at-most.js';
import { createBackoff } from './backoff.js';
import { startDeadLetterRetention } from './dead-letter-retention.js';
import { failingWarning, newStatus } from './output-status.js';
import { type OutputReport, type OutputsDeps, type RunningOutputs, startOutputs } from './start-outputs.js';

/**
 * How much lower the outputs' thread runs than ingest, in nice levels (Linux keeps one per thread). On a
 * saturated core the kernel shares time by weight: at +10 the forwarders still took ~10 % of it, a 10 % cut of
 * ingest (figure 13 at 0.90-0.91x, issue 28's limit); at +15 they take ~3 %, enough to keep going through a
 * flood; +19 (1.5 %) would all but stop them. A free core runs them at full speed whatever this is.
 */
export const OUTPUTS_NICE = 15;

export interface OutputsThreadData {
  /** Nice levels to add to the thread's own (OUTPUTS_NICE). */
  nice: number;
  config: Config;
  dataDir: string;
  owner: Owner | null;
  env: Record<string, string | undefined>;
  level: string;
  timing: Pick<OutputsDeps, 'retryBaseMs' | 'retryCapMs' | 'pausedRetryMs'>;
}

export type OutputsCall =
  | { id: number; op: 'report' | 'metricRows' | 'poke' | 'started' | 'stop' }
  | { id: number; op: 'reload'; outputs: Record<string, OutputConfig> }
  | { id: number; op: 'level'; level: string };

export type ThreadMessage =
  | { t: 'log'; line: string }
  | { t: 'ready' }
  | { t: 'reply'; id: number; value?: unknown; error?: string };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What start-outputs.ts takes (its `cursors` serve while no output forwards), and the configuration. */
export interface RunOutputsOptions extends OutputsDeps {
  config: Config;
  /**
   * Told each `outputs` section a reload applies, when it is asked for: the files backend's retention holds
   * what these outputs have not passed (store.ts, StoreWriterOptions.outputs), whichever way the reload came.
   */
  onReload?: (outputs: Record<string, OutputConfig>) => void;
}

/** How long `outputs list`, /readyz and metrics wait for the thread's answer before giving up on it. */
const ANSWER_MS = 5000;
/** How long stop waits for the forwarders to stop at a safe point before the thread is ended anyway. */
const STOP_MS = 10_000;
/** How long a thread must have run for its next end to be restarted after the shortest wait again. */
const STABLE_MS = 60_000;

/** The thread's module (run from the sources, tests under tsx, it registers tsx itself first). */
function newThread(workerData: OutputsThreadData): Worker {
  return startThreadModule(import.meta.url, 'outputs-thread', { workerData, name: 'threatcol outputs' });
}

export function runOutputs(options: RunOutputsOptions): RunningOutputs {
  const forwarding = (outputs: Record<string, OutputConfig>) => Object.values(outputs).some((o) => o.enabled);
  const start = (outputs: Record<string, OutputConfig>): RunningOutputs =>
    forwarding(outputs) ? outputsThread(options, outputs) : startOutputs(outputs, options);
  let current = start(options.config.outputs);
  let threaded = forwarding(options.config.outputs);
  // Dead letters are files of this box on either backend: the store's retention period applies to them here.
  const deadLetters = startDeadLetterRetention({
    dataDir: options.dataDir,
    days: options.config.store.retention.days,
    logger: options.logger,
    now: options.now,
  });
  let stopped = false;
  let reloading: Promise<void> = Promise.resolve();
  return {
    report: () => current.report(),
    metricRows: () => current.metricRows(),
    reload(next) {
      if (!stopped) options.onReload?.(next);
      // One at a time; a failed one is logged and the next starts from what runs (never a rejected chain).
      reloading = reloading
        .then(async () => {
          if (stopped) return;
          if (forwarding(next) === threaded) return current.reload(next);
          await current.stop();
          current = start(next);
          threaded = forwarding(next);
        })
        .catch((error: unknown) => {
          options.logger.error({ err: (error as Error).message }, 'outputs not reloaded');
        });
      return reloading;
    },
    poke: () => current.poke(),
    started: () => current.started(),
    async stop() {
      // A reload asked for from now on (a SIGHUP during shutdown) starts nothing; one under way may finish.
      stopped = true;
      deadLetters.stop();
      await waitAtMost(reloading, STOP_MS);
      await current.stop();
    },
  };
}

/** The outputs in their thread: the calls of RunningOutputs as messages, the thread's logs in this logger. */
function outputsThread(options: RunOutputsOptions, initial: Record<string, OutputConfig>): RunningOutputs {
  const { logger } = options;
  let outputs = initial;
  let worker: Worker | null = null;
  let stopping = false;
  let nextId = 1;
  const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  /** The last answers, shown (marked) while the thread is started again. */
  let lastReport: OutputReport[] = [];
  let lastRows: OutputMetricRow[] = [];
  /** Why the thread is away, and since when (null: it answers). */
  let down: { reason: string; since: number } | null = null;
  const restarts = createBackoff({ baseMs: 1000, capMs: 60_000 });
  /** A thread that stayed up this long starts the backoff over: one that dies at each start is not restarted every second. */
  let stable: NodeJS.Timeout | undefined;
  let startedOnce: () => void = () => {};
  const firstStart = new Promise<void>((resolve) => {
    startedOnce = resolve;
  });

  const spawn = () => {
    const data: OutputsThreadData = {
      nice: OUTPUTS_NICE,
      config: { ...options.config, outputs },
      dataDir: options.dataDir,
      owner: options.owner,
      env: options.env,
      level: logger.level,
      timing: {
        ...(options.retryBaseMs === undefined ? {} : { retryBaseMs: options.retryBaseMs }),
        ...(options.retryCapMs === undefined ? {} : { retryCapMs: options.retryCapMs }),
        ...(options.pausedRetryMs === undefined ? {} : { pausedRetryMs: options.pausedRetryMs }),
      },
    };
    const thread = newThread(data);
    worker = thread;
    let failure: string | null = null;
    thread.on('message', (message: ThreadMessage) => {
      if (message.t === 'log') relogLine(logger, message.line);
      else if (message.t === 'ready') {
        down = null;
        stable = setTimeout(() => restarts.reset(), STABLE_MS).unref();
      } else {
        const call = calls.get(message.id);
        calls.delete(message.id);
        if (message.error === undefined) call?.resolve(message.value);
        else call?.reject(new Error(message.error));
      }
    });
    thread.on('error', (error) => {
      failure = error instanceof Error ? error.message : String(error);
    });
    thread.on('exit', (code) => {
      clearTimeout(stable);
      if (worker === thread) worker = null;
      for (const call of calls.values()) call.reject(new Error('the outputs thread stopped'));
      calls.clear();
      if (stopping) return;
      const reason = failure ?? `the outputs thread exited with code ${code}`;
      down = { reason, since: down?.since ?? options.now() };
      logger.error({ err: reason }, 'outputs thread stopped; starting it again');
      startedOnce();
      setTimeout(() => {
        if (!stopping) spawn();
      }, restarts.next()).unref();
    });
  };

  const call = <T>(message: DistributiveOmit<OutputsCall, 'id'>): Promise<T> => {
    const thread = worker;
    if (!thread) return Promise.reject(new Error(down?.reason ?? 'the outputs thread is not running'));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      thread.postMessage({ ...message, id });
    });
  };

  /** A call bounded in time: an answer, or an error that says the thread did not give one. */
  const bounded = <T>(message: DistributiveOmit<OutputsCall, 'id'>, ms: number): Promise<T> => {
    const id = nextId;
    const answer = call<T>(message);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        calls.delete(id);
        reject(new Error(`the outputs thread did not answer in ${ms} ms`));
      }, ms);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  };

  // The thread logs at serve's level, also after a live change of it (SIGHUP with a new log.level).
  const onLevel = (label: string) => {
    call<void>({ op: 'level', level: label }).catch(() => {});
  };
  logger.on('level-change', onLevel);

  spawn();
  call<void>({ op: 'started' }).then(startedOnce, startedOnce);

  return {
    async report() {
      const now = options.now();
      try {
        lastReport = (await bounded<OutputReport[]>({ op: 'report' }, ANSWER_MS)).map((r) => ({
          ...r,
          warning: r.state === 'removed' ? null : failingWarning(r, now),
        }));
        return lastReport;
      } catch (error) {
        // The thread is away (being started again) or does not answer in time (starved by a flood, at its low
        // priority): each output is shown as it last reported, with the reason, and as failing once the thread
        // has been away for as long as an output's own failure takes to warn.
        const reason = (error as Error).message;
        const since = down?.since ?? now;
        return Object.entries(outputs)
          .map(([name, output]): OutputReport => {
            const last = lastReport.find((r) => r.name === name);
            if (!output.enabled)
              return last ?? { ...newStatus(name, output.type, 'disabled'), position: null, warning: null };
            const status = {
              ...(last ?? { ...newStatus(name, output.type, 'paused'), position: null }),
              // Away: not forwarding. Slow to answer: still doing what it last said.
              ...(worker === null || last === undefined ? { state: 'paused' as const } : {}),
              lastError: reason,
              failingSince: last?.failingSince ?? since,
            };
            return { ...status, warning: failingWarning(status, now) };
          })
          .concat(lastReport.filter((r) => r.state === 'removed' && !(r.name in outputs)))
          .sort((a, b) => (a.name < b.name ? -1 : 1));
      }
    },
    async metricRows() {
      try {
        lastRows = await bounded<OutputMetricRow[]>({ op: 'metricRows' }, ANSWER_MS);
      } catch {}
      return lastRows;
    },
    async reload(next) {
      outputs = next;
      try {
        await bounded<void>({ op: 'reload', outputs: next }, STOP_MS);
      } catch (error) {
        // A thread started again meanwhile reads `outputs` at its start.
        logger.warn({ err: (error as Error).message }, 'outputs reloaded at the next start of their thread');
      }
    },
    poke() {
      call<void>({ op: 'poke' }).catch(() => {});
    },
    started: () => firstStart,
    async stop() {
      stopping = true;
      logger.off('level-change', onLevel);
      clearTimeout(stable);
      const thread = worker;
      if (!thread) return;
      await waitAtMost(
        call<void>({ op: 'stop' }).catch(() => {}),
        STOP_MS,
      );
      await thread.terminate();
    },
  };
}
