// The silence watcher of a running collector: every 2 s it looks at each watched sensor's last accepted record
// (the store's stats), reports a sensor that went silent and one that is back (silence-rules.ts), and keeps
// the silences it reported in the store, so a restart neither repeats nor loses one. One per box (the daemon, or
// the primary of --workers); on NATS, only the holder of the cluster's lease (DecisionsStore.lease) reports.
import type { Logger } from 'pino';
import { effectiveExpectEvery } from '../config/expect-every.js';
import type { DecisionsStore } from '../store/decisions.js';
import type { Sensor } from '../store/registry.js';
import type { SensorActivity, SensorSilence, SensorStatsStore } from '../store/store.js';
import { waitAtMost } from '../wait-at-most.js';
import { lookForSilence, type SilenceEvent } from './silence-rules.js';

/** How long a stop waits for the look in progress and the lease's hand-back (a store that does not answer). */
const STOP_MS = 3000;
/** How often the watcher looks (and, on NATS, renews its lease). */
const LOOK_EVERY_MS = 2000;
/** The lease's name among the cluster's (the decisions engine holds `engine`). */
const LEASE_NAME = 'silence-watch';
/** While no sensor is watched, the stats are read every this many looks (30 s), for the last-seen series. */
const UNWATCHED_READ_EVERY = 15;

export interface SilenceWatcherDeps {
  /** The sensors now (the daemon's watched copy, or a read of the registry). */
  sensors: () => Sensor[] | Promise<Sensor[]>;
  stats: Pick<SensorStatsStore, 'read' | 'readSilences' | 'writeSilence'>;
  /** sensors.expectEvery as configured now (it follows reloads). */
  configuredExpectEvery: () => string;
  /**
   * Hands one event to the outputs (appends the collector's record of it); the silence is stored only after
   * it resolves, so a crash in between reports it again rather than never (at least once).
   */
  report: (event: SilenceEvent) => Promise<void>;
  /** NATS: only the holder of this lease reports (one watcher per cluster); absent: always this one. */
  lease?: { decisions: Pick<DecisionsStore, 'lease'>; holder: string; ttlMs: number };
  /** How late a record accepted elsewhere may reach `stats` (silence-rules.ts). */
  slackMs?: number;
  logger: Logger;
  now?: () => number;
  lookEveryMs?: number;
}

/** A sensor as /metrics and the dashboard show it. */
export interface WatchedSensor {
  sensor: string;
  silent: boolean;
  silent_since: string | null;
  /** Its last accepted record (Unix ms), or null when none is known. */
  lastAcceptedMs: number | null;
}

export interface SilenceWatcher {
  /** The active sensors that have an interval, as of the last look. */
  watched(): WatchedSensor[];
  /** Every active sensor's last accepted record (Unix ms), as of the last look. */
  lastAccepted(): Map<string, number>;
  stop(): Promise<void>;
}

export function startSilenceWatcher(deps: SilenceWatcherDeps): SilenceWatcher {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  const { logger } = deps;
  let leader = deps.lease === undefined;
  /** The leader's copy of the stored silences (it is their only writer); re-read when it takes the lease. */
  let silences: Record<string, SensorSilence> | null = null;
  let view: { sensors: Sensor[]; activity: Record<string, SensorActivity> } = { sensors: [], activity: {} };
  let failing = false;
  /** Looks since the stats were last read (while no sensor is watched). */
  let looksUnread = UNWATCHED_READ_EVERY;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let looking: Promise<void> = Promise.resolve();

  async function lookOnce(): Promise<void> {
    if (deps.lease) {
      const was = leader;
      leader = await deps.lease.decisions.lease(LEASE_NAME, deps.lease.holder, deps.lease.ttlMs);
      if (leader !== was) {
        silences = null;
        logger.info(
          { holder: deps.lease.holder },
          leader
            ? 'this collector watches for silent sensors now'
            : 'another collector watches for silent sensors',
        );
      }
    }
    const sensors = await deps.sensors();
    // The stats (on NATS, a read of every collector's key of every sensor) at every look only while a sensor is
    // watched; else now and then, for threatcol_sensor_last_seen_seconds.
    const configured = deps.configuredExpectEvery();
    const watching = sensors.some(
      (s) => s.status === 'active' && effectiveExpectEvery(s.expect_every, configured) > 0,
    );
    const activity =
      watching || ++looksUnread >= UNWATCHED_READ_EVERY ? await deps.stats.read() : view.activity;
    if (activity !== view.activity) looksUnread = 0;
    // A follower reads what the leader stored at every look, for its /metrics and dashboard.
    if (silences === null || !leader) silences = await deps.stats.readSilences();
    view = { sensors, activity };
    if (!leader) return;
    const look = lookForSilence({
      sensors,
      activity,
      silences,
      configuredExpectEvery: configured,
      startedAt,
      now: now(),
      slackMs: deps.slackMs ?? 0,
    });
    for (const name of look.dropped) {
      await deps.stats.writeSilence(name, null);
      delete silences[name];
    }
    for (const event of look.events) {
      if (stopped) return;
      await deps.report(event);
      if (event.kind === 'silent') {
        const silence = { silent_since: event.silent_since };
        await deps.stats.writeSilence(event.sensor, silence);
        silences[event.sensor] = silence;
      } else {
        await deps.stats.writeSilence(event.sensor, null);
        delete silences[event.sensor];
      }
      logger.warn(
        {
          sensor: event.sensor,
          silent_since: event.silent_since,
          last_seen: event.last_seen,
          expect_every_ms: event.expect_every_ms,
        },
        event.kind === 'silent'
          ? 'sensor is silent: nothing accepted within its expected interval'
          : 'sensor is back: a record was accepted after its silence',
      );
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      looking = lookOnce()
        .then(() => {
          if (failing) logger.info('the silence watcher reads and writes the store again');
          failing = false;
        })
        .catch((error: Error) => {
          // The store is down or refused a write: the next look tries again; said once per failing spell.
          if (!failing) logger.error({ err: error.message }, 'cannot watch for silent sensors; retrying');
          failing = true;
          silences = null;
        })
        .finally(schedule);
    }, deps.lookEveryMs ?? LOOK_EVERY_MS);
    timer.unref();
  }
  schedule();

  return {
    watched() {
      const configured = deps.configuredExpectEvery();
      const known = silences ?? {};
      return view.sensors
        .filter((s) => s.status === 'active' && effectiveExpectEvery(s.expect_every, configured) > 0)
        .map((s) => {
          const since = Object.hasOwn(known, s.name) ? (known[s.name]?.silent_since ?? null) : null;
          return {
            sensor: s.name,
            silent: since !== null,
            silent_since: since,
            lastAcceptedMs: lastAcceptedOf(view.activity, s.name),
          };
        });
    },
    lastAccepted() {
      const out = new Map<string, number>();
      for (const sensor of view.sensors) {
        const ms = sensor.status === 'active' ? lastAcceptedOf(view.activity, sensor.name) : null;
        if (ms !== null) out.set(sensor.name, ms);
      }
      return out;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      let ended = false;
      await waitAtMost(
        (async () => {
          await looking;
          // A stopping collector hands the watch on at the next collector's look, not at the lease's end.
          if (deps.lease && leader) {
            await deps.lease.decisions.lease(LEASE_NAME, deps.lease.holder, 0).catch(() => {});
          }
          ended = true;
        })(),
        STOP_MS,
      );
      // A look cut short may have stored its record and not yet the silence: the next start reports it again
      // (at least once), as after a crash.
      if (!ended)
        deps.logger.warn(
          { limitMs: STOP_MS },
          'the silence watcher did not stop in time (a store that does not answer): on NATS its lease passes on when it expires',
        );
    },
  };
}

function lastAcceptedOf(activity: Record<string, SensorActivity>, name: string): number | null {
  const at = Object.hasOwn(activity, name) ? activity[name]?.last_accepted : null;
  const ms = at ? Date.parse(at) : Number.NaN;
  return Number.isNaN(ms) ? null : ms;
}
