// Runs one forwarder per enabled output of a box (the daemon, or the primary under `--workers`), reloads
// them from a new configuration without a restart, and reports their status with the store's positions.
import type { Logger } from 'pino';
import type { OutputConfig } from '../config/outputs-schema.js';
import type { Owner } from '../data-dir/file-owner.js';
import type { OutputMetricRow } from '../metrics/output-metrics.js';
import type { OutputCursors, OutputPosition } from '../store/store.js';
import { type Forwarder, startForwarder } from './forwarder.js';
import { failingWarning, newStatus, type OutputStatus } from './output-status.js';
import { isLoopbackHost } from './receivers/http-post.js';
import type { Pacing } from './receivers/receiver.js';

export interface OutputsDeps {
  cursors: OutputCursors;
  dataDir: string;
  owner: Owner | null;
  logger: Logger;
  env: Record<string, string | undefined>;
  now: () => number;
  /** Forwarder timing, for tests (see ForwarderDeps). */
  retryBaseMs?: number;
  retryCapMs?: number;
  pausedRetryMs?: number;
}

/** An output's status joined with its position (absent before the output first ran). */
export interface OutputReport extends OutputStatus {
  position: OutputPosition | null;
  /** Set when it has failed for over a minute: /readyz lists it (output-status.ts). */
  warning: string | null;
}

export interface RunningOutputs {
  /** Status of every configured output, and of outputs that only have a cursor left (state "removed"). */
  report(): Promise<OutputReport[]>;
  /** The same as metric rows. */
  metricRows(): Promise<OutputMetricRow[]>;
  /** Applies a new `outputs` section: changed outputs restart, removed ones stop (their cursor stays). */
  reload(outputs: Record<string, OutputConfig>): Promise<void>;
  /** SIGHUP: paused or backing-off outputs try again now. */
  poke(): void;
  /** Settles when every output started so far has opened its feed once (or failed to): see Forwarder.started. */
  started(): Promise<void>;
  stop(): Promise<void>;
}

export function startOutputs(outputs: Record<string, OutputConfig>, deps: OutputsDeps): RunningOutputs {
  const running = new Map<string, { config: string; forwarder: Forwarder | null; status: OutputStatus }>();
  /** Per output, when its receiver last sent (email's interval): a reload that restarts it keeps this. */
  const pacings = new Map<string, Pacing>();

  const start = (name: string, output: OutputConfig) => {
    if (!output.enabled) {
      running.set(name, {
        config: JSON.stringify(output),
        forwarder: null,
        status: newStatus(name, output.type, 'disabled'),
      });
      return;
    }
    warnPlainTransport(name, output, deps.logger);
    const pacing = pacings.get(name) ?? { lastSentAt: Number.NEGATIVE_INFINITY };
    pacings.set(name, pacing);
    const forwarder = startForwarder({ name, output, ...deps, pacing });
    running.set(name, { config: JSON.stringify(output), forwarder, status: forwarder.status });
  };
  for (const [name, output] of Object.entries(outputs)) start(name, output);

  let stopped = false;
  const apply = async (next: Record<string, OutputConfig>) => {
    if (stopped) return;
    for (const [name, entry] of [...running]) {
      const wanted = next[name];
      if (wanted && JSON.stringify(wanted) === entry.config) continue;
      await entry.forwarder?.stop();
      running.delete(name);
      if (!wanted)
        deps.logger.info({ output: name }, 'output removed; its cursor stays until `outputs forget`');
    }
    for (const [name, output] of Object.entries(next)) if (!running.has(name)) start(name, output);
  };
  let reloading: Promise<void> = Promise.resolve();

  const positions = async (): Promise<Map<string, OutputPosition>> => {
    try {
      return new Map((await deps.cursors.list()).map((p) => [p.name, p]));
    } catch {
      return new Map();
    }
  };

  return {
    async report() {
      const byName = await positions();
      const reports: OutputReport[] = [];
      const now = deps.now();
      for (const [name, entry] of running)
        reports.push({
          ...entry.status,
          position: byName.get(name) ?? null,
          warning: failingWarning(entry.status, now),
        });
      for (const [name, position] of byName) {
        if (!running.has(name)) reports.push({ ...newStatus(name, '-', 'removed'), position, warning: null });
      }
      return reports.sort((a, b) => (a.name < b.name ? -1 : 1));
    },
    async metricRows() {
      const byName = await positions();
      return [...running].map(([name, { status }]) => ({
        output: name,
        recordsSent: status.recordsSent,
        batches: status.batches,
        retries: status.retries,
        deadLetters: status.deadLetters,
        groupOverflow: status.groupOverflow,
        groupRefused: status.groupRefused,
        lagRecords: byName.get(name)?.lagRecords ?? 0,
        lagSeconds: byName.get(name)?.lagSeconds ?? 0,
      }));
    },
    reload(next) {
      // One reload at a time: SIGHUP and the file watch may ask at once, and two would start an output twice.
      reloading = reloading
        .then(() => apply(next))
        .catch((error: unknown) => {
          deps.logger.error({ err: (error as Error).message }, 'outputs not reloaded');
        });
      return reloading;
    },
    poke() {
      for (const { forwarder } of running.values()) forwarder?.poke();
    },
    async started() {
      await Promise.all([...running.values()].map((e) => e.forwarder?.started));
    },
    async stop() {
      stopped = true;
      await reloading;
      await Promise.all([...running.values()].map((e) => e.forwarder?.stop()));
      running.clear();
    },
  };
}

/** DESIGN 13: plain http:// (or syslog over plain TCP) is allowed, but said out loud unless it stays on this machine. */
export function warnPlainTransport(name: string, output: OutputConfig, logger: Logger): void {
  if (output.type === 'syslog' && output.transport === 'tcp' && !isLoopbackHost(String(output.host))) {
    logger.warn(
      { output: name, host: output.host },
      'output sends syslog over plain TCP: records cross the network unencrypted',
    );
    return;
  }
  if (typeof output.url !== 'string') return;
  try {
    const url = new URL(output.url);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      logger.warn(
        { output: name, url: url.origin },
        'output sends over plain http://: records cross the network unencrypted',
      );
    }
  } catch {}
}
