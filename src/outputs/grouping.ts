// Grouped alerts (an output's `group`): records with the same values of `group.by` make a group; its first record
// is sent at once, the rest of each `window` becomes one summary (count, first and last time, sensors, a few
// samples). A window that ends with no record closes the group; one that counted some starts the next window.
//
// At-least-once with the store's cursor: the open groups live in a state file beside the output's dead letters
// (data dir `outputs/NAME.groups.json`, written atomically and fsynced), written after a batch's first records
// were delivered and before the batch is acked, and after each summary was delivered. A crash before the write
// re-reads the batch (its first records may be sent again, nothing is lost); a crash between the write and the
// ack re-reads a batch whose ids the state names (every record counted and not yet acked, whenever it comes back:
// NATS redelivers it after ack_wait, behind newer records), and they are not counted twice; a crash after a
// summary left and before the write sends that summary again. The state is bounded: `maxGroups` open groups (records of new
// groups beyond it are counted in one overflow group), `samples` records and SENSORS_KEPT sensor names a group,
// SAMPLE_BYTES of samples in all, and PENDING_MAX ids counted and not known acked besides the batch being counted.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BATCH_MAX_RECORDS, GROUP_DEFAULTS, type OutputConfig } from '../config/outputs-schema.js';
import { type Owner, writeFileAtomic } from '../data-dir/file-owner.js';
import { outputsDir } from './dead-letter-files.js';
import type { GroupSummary, OutgoingRecord } from './receivers/receiver.js';

/** An output's `group` with its defaults. */
export interface GroupConfig {
  by: string[];
  window: string;
  windowMs: number;
  maxGroups: number;
  samples: number;
}

/** Sensor names a group keeps (a summary says "on N+ sensors" past it). */
export const SENSORS_KEPT = 50;

/** Bytes of sample records all open groups of an output hold together; past it, a window keeps no more samples. */
export const SAMPLE_BYTES = 2 * 1024 * 1024;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** The output's `group`, or null when it forwards every record. */
export function groupConfig(output: OutputConfig): GroupConfig | null {
  const raw = output.group as { by: string[]; window: string; maxGroups?: number; samples?: number } | null;
  if (raw === null || raw === undefined) return null;
  const m = /^(\d+)([smh])$/.exec(raw.window);
  const windowMs = Math.max(1000, Number(m?.[1] ?? 600) * (UNIT_MS[m?.[2] ?? 's'] as number));
  return {
    by: raw.by,
    window: raw.window,
    windowMs,
    maxGroups: raw.maxGroups ?? GROUP_DEFAULTS.maxGroups,
    samples: raw.samples ?? GROUP_DEFAULTS.samples,
  };
}

interface OpenGroup {
  key: string;
  /** The `by` values; null for the overflow group. */
  group: Record<string, unknown> | null;
  /** When the current window ends (epoch ms, the forwarder's clock). */
  endsAt: number;
  count: number;
  firstAt: string | null;
  lastAt: string | null;
  sensors: string[];
  /** Stored lines of the first records of the window. */
  samples: string[];
}

interface GroupState {
  v: 1;
  groups: OpenGroup[];
  /** The release before: the ids of the last batch counted. */
  absorbed?: string[];
  /** Ids counted and not yet acked, with when (epoch ms): handed over again, they are not counted twice. */
  pending?: [id: string, at: number][];
}

/** The key of records of groups past `maxGroups`. */
const OVERFLOW = '\u0000overflow';

/**
 * How long ids counted but not known acked are kept: a batch acked just before a crash is never handed over
 * again, and its ids go after this long (a day: past any redelivery, an outage of NATS included).
 */
const PENDING_KEEP_MS = 24 * 3_600_000;
/**
 * How many are kept from before the batch being counted, only to bound memory (a few hundred bytes an id) and the
 * state file (55): twice the largest batch. A batch not acked when the collector died (or its ack failed) comes
 * back after a restart, on NATS behind newer batches; the ids of the last two such batches, each as large as
 * allowed, stay until they come back or age out. Past the bound the oldest go first.
 */
export const PENDING_MAX = 2 * BATCH_MAX_RECORDS;

/** A group's key past this many characters is its digest; a value shown in a summary is cut to VALUE_CHARS. */
const KEY_CHARS = 512;
const VALUE_CHARS = 256;

export function groupStatePath(dataDir: string, name: string): string {
  return join(outputsDir(dataDir), `${name}.groups.json`);
}

export interface Grouper {
  /**
   * Counts a batch into its groups: returns the records that open a group (to send at once). Records of the
   * batch already counted before a crash are skipped.
   */
  absorb(records: readonly OutgoingRecord[], now: number): OutgoingRecord[];
  /** Summaries of the windows ended by `now` (with a count); `settle` each once delivered. */
  due(now: number): GroupSummary[];
  /** The summary was delivered (or refused for good): its group starts its next window, or closes. */
  settle(summary: GroupSummary, now: number): void;
  /** Closes the groups whose window ended empty; how many. */
  closeQuiet(now: number): number;
  /** When the next window ends (epoch ms), or null with no group open. */
  nextEnd(): number | null;
  /** Writes the state (atomically, fsynced). */
  save(): void;
  /** Records of new groups counted into the overflow group since the last call. */
  takeOverflowed(): number;
  /** The batch was acked: its records will not be handed over again. */
  acked(records: readonly OutgoingRecord[]): void;
}

/**
 * Loads the output's open groups from its state file (none when it has none). A file that cannot be read or is
 * not a state is moved aside (`.damaged-<time>`) and said (`warn`): its counts are lost, never silently.
 */
export function openGrouper(
  config: GroupConfig,
  path: string,
  owner: Owner | null,
  warn: (message: string) => void = () => {},
): Grouper {
  const groups = new Map<string, OpenGroup>();
  /** Ids counted and not yet acked, oldest first, with when they were counted. */
  const pending = new Map<string, number>();
  let text: string | null = null;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warn(damaged(path, error));
  }
  if (text !== null) {
    try {
      const state = JSON.parse(text) as GroupState;
      if (state.v !== 1 || !Array.isArray(state.groups)) throw new Error('not a state of grouped alerts');
      for (const g of state.groups) {
        if (!isOpenGroup(g)) throw new Error('a group of it is not one');
        groups.set(g.key, g);
      }
      // Aged from now, not from when they were counted: a batch handed over again right after a start that
      // follows days down is still recognised.
      const at = Date.now();
      for (const id of state.absorbed ?? []) pending.set(String(id), at);
      for (const entry of state.pending ?? [])
        pending.set(String(Array.isArray(entry) ? entry[0] : entry), at);
    } catch (error) {
      groups.clear();
      pending.clear();
      warn(damaged(path, error));
    }
  }
  let overflowed = 0;
  let sampleBytes = 0;
  for (const g of groups.values()) for (const line of g.samples) sampleBytes += line.length;

  /** A field's value (own fields only: `constructor` or `__proto__` is no inherited value). */
  const fieldValue = (record: Record<string, unknown>, f: string) =>
    Object.hasOwn(record, f) ? (record[f] ?? null) : null;
  const keyOf = (record: Record<string, unknown>) => {
    const key = JSON.stringify(config.by.map((f) => fieldValue(record, f)));
    // Values come from senders (up to 16 KiB each): a long key is held as its digest.
    return key.length <= KEY_CHARS ? key : `#${createHash('sha256').update(key).digest('base64')}`;
  };
  // A copy, not a slice: V8 keeps the whole value alive behind a slice of it.
  const shown = (v: unknown) =>
    typeof v === 'string' && v.length > VALUE_CHARS
      ? Buffer.from(`${v.slice(0, VALUE_CHARS)}…`, 'utf8').toString('utf8')
      : v;
  /** A window's end no further than one window away: a clock set back (or a state written ahead) never stalls it. */
  const clamp = (g: OpenGroup, now: number) => {
    if (g.endsAt > now + config.windowMs) g.endsAt = now + config.windowMs;
  };
  const open = (key: string, group: Record<string, unknown> | null, now: number): OpenGroup => {
    const g: OpenGroup = {
      key,
      group,
      endsAt: now + config.windowMs,
      count: 0,
      firstAt: null,
      lastAt: null,
      sensors: [],
      samples: [],
    };
    groups.set(key, g);
    return g;
  };

  return {
    takeOverflowed() {
      const taken = overflowed;
      overflowed = 0;
      return taken;
    },
    acked(records) {
      for (const r of records) pending.delete(r.id);
    },
    absorb(records, now) {
      const firsts: OutgoingRecord[] = [];
      // Counted before, not acked (a crash, a failed ack): handed over again, whenever, they are not counted twice.
      // Found before the old ids are pruned, so a batch larger than the bound keeps its own.
      const counted = new Set<string>();
      for (const r of records) if (pending.has(r.id)) counted.add(r.id);
      // Ids kept past their time or their number go, oldest first (a batch acked just before a crash).
      for (const [id, at] of pending) {
        if (at > now - PENDING_KEEP_MS && pending.size <= PENDING_MAX) break;
        pending.delete(id);
      }
      for (const r of records) {
        // Newest last, so the pruning above meets the oldest first.
        pending.delete(r.id);
        pending.set(r.id, now);
        if (counted.has(r.id)) continue;
        const record = r.record as unknown as Record<string, unknown>;
        let key = keyOf(record);
        let g = groups.get(key);
        if (g === undefined) {
          if (groups.size >= config.maxGroups + (groups.has(OVERFLOW) ? 1 : 0)) {
            overflowed += 1;
            key = OVERFLOW;
            g = groups.get(OVERFLOW);
          }
          if (g === undefined) {
            const values =
              key === OVERFLOW
                ? null
                : Object.fromEntries(config.by.map((f) => [f, shown(fieldValue(record, f))]));
            open(key, values, now);
            firsts.push(r);
            continue;
          }
        }
        g.count += 1;
        // The earliest and the latest: records may come out of order (a redelivery, collectors sharing a stream).
        const at = String(r.record.received_at);
        if (g.firstAt === null || at < g.firstAt) g.firstAt = at;
        if (g.lastAt === null || at > g.lastAt) g.lastAt = at;
        const sensor = String(r.record.sensor);
        if (g.sensors.length < SENSORS_KEPT + 1 && !g.sensors.includes(sensor)) g.sensors.push(sensor);
        if (g.samples.length < config.samples && sampleBytes + r.line.length <= SAMPLE_BYTES) {
          g.samples.push(r.line);
          sampleBytes += r.line.length;
        }
      }
      return firsts;
    },
    due(now) {
      const summaries: GroupSummary[] = [];
      for (const g of groups.values()) {
        clamp(g, now);
        if (g.endsAt > now || g.count === 0) continue;
        summaries.push({
          key: g.key,
          group: g.group,
          count: g.count,
          firstAt: g.firstAt as string,
          lastAt: g.lastAt as string,
          sensors: g.sensors.slice(0, SENSORS_KEPT),
          moreSensors: g.sensors.length > SENSORS_KEPT,
          samples: g.samples,
          window: config.window,
        });
      }
      return summaries;
    },
    settle(summary, now) {
      const g = groups.get(summary.key);
      if (g === undefined) return;
      for (const line of g.samples) sampleBytes -= line.length;
      Object.assign(g, {
        count: 0,
        firstAt: null,
        lastAt: null,
        sensors: [],
        samples: [],
        endsAt: now + config.windowMs,
      });
    },
    closeQuiet(now) {
      let closed = 0;
      for (const [key, g] of groups) {
        clamp(g, now);
        if (g.endsAt > now || g.count > 0) continue;
        groups.delete(key);
        closed += 1;
      }
      return closed;
    },
    nextEnd() {
      let next: number | null = null;
      for (const g of groups.values()) if (next === null || g.endsAt < next) next = g.endsAt;
      return next;
    },
    save() {
      mkdirSync(dirname(path), { recursive: true });
      const state: GroupState = { v: 1, groups: [...groups.values()], pending: [...pending] };
      writeFileAtomic(path, JSON.stringify(state), 0o640, owner);
    },
  };
}

/** Moves a state file that cannot be read aside; what to say of it. */
function damaged(path: string, error: unknown): string {
  const aside = `${path}.damaged-${Date.now()}`;
  let where = `moved to ${aside}`;
  try {
    renameSync(path, aside);
  } catch {
    where = 'left where it is';
  }
  return `grouped alerts' state ${path} cannot be read (${(error as Error).message}): its open groups' counts are lost; ${where}`;
}

/** What a state file's group must hold for the grouper to use it (a hand-edited or foreign file may not). */
function isOpenGroup(g: unknown): g is OpenGroup {
  if (typeof g !== 'object' || g === null) return false;
  const o = g as Record<string, unknown>;
  const isTime = (v: unknown) => v === null || typeof v === 'string';
  return (
    typeof o.key === 'string' &&
    (o.group === null || (typeof o.group === 'object' && !Array.isArray(o.group))) &&
    Number.isFinite(o.endsAt) &&
    Number.isInteger(o.count) &&
    (o.count as number) >= 0 &&
    isTime(o.firstAt) &&
    isTime(o.lastAt) &&
    Array.isArray(o.sensors) &&
    o.sensors.every((x) => typeof x === 'string') &&
    Array.isArray(o.samples) &&
    o.samples.every((x) => typeof x === 'string')
  );
}
