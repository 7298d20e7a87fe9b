// Copies one store into another through the store interfaces (`store migrate`): sensors as they are, the
// blocklist's decisions, then every record with its own id, skipping what the target already holds, so a re-run
// stores nothing twice.
import { isDeepStrictEqual } from 'node:util';
import type { StoredRecord } from '../records/stored-record.js';
import { type DecisionChange, decisionEntries, MAP_OF } from './decisions.js';
import type { Sensor, SensorImport } from './registry.js';
import { sameSensor } from './sensor-changes.js';
import type { Store } from './store.js';

export interface CopyProgress {
  phase: 'ids' | 'records';
  /** ids: records of the target read so far; records: source records read so far. */
  read: number;
  copied: number;
  alreadyPresent: number;
}

export interface CopyOptions {
  /** Count only: the target gets no record and no sensor. */
  dryRun: boolean;
  /** Replace a target sensor that differs from the source's (else it is reported and left alone). */
  overwriteSensors: boolean;
  /** Records published per append (one round of pipelined publishes). */
  batchSize?: number;
  /** Called now and then while records are read and copied (progress for big stores). */
  onProgress?: (progress: CopyProgress) => void;
  signal?: AbortSignal;
}

export interface SensorCopyResult {
  copied: string[];
  alreadyPresent: string[];
  /** Differ in the target and left alone (without `overwriteSensors`). */
  conflicting: string[];
  /** Differed in the target and replaced (with `overwriteSensors`). */
  overwritten: string[];
  /**
   * Deleted in the target (`sensor delete` there, since an earlier run copied them) and not created or rotated
   * in the source after that: left deleted, so a key withdrawn on the target does not work again.
   */
  removedInTarget: string[];
}

export interface RecordCopyResult {
  read: number;
  copied: number;
  alreadyPresent: number;
  /** Source lines that are not stored records (record-shape.ts): skipped, neither copied nor counted as read. */
  notRecords: number;
}

export interface DecisionCopyResult {
  copied: number;
  alreadyPresent: number;
  /** Entries the target holds with other content (`KIND KEY`): left as they are, its own being newer. */
  leftInTarget: string[];
  /**
   * Allow entries and feeds the target holds and the source does not (`KIND KEY`): removed from the source since
   * an earlier run, or made on the target; the files store keeps no mark of their removal to tell. Left as they
   * are, and named (blocks the target's own engine made are many, and the source's block removals are carried).
   */
  onlyInTarget: string[];
}

const DEFAULT_BATCH = 1000;

/**
 * Sensors: each stored as it is (key hashes, status, grace expiries, dates). One the target deleted (a run
 * before copied it, then `sensor delete` there) stays deleted, unless the source's was created or given a key
 * after the removal. In a dry run the target is only read, and a sensor counts as it would be counted.
 */
export async function copySensors(
  source: Store,
  target: Store,
  options: CopyOptions,
): Promise<SensorCopyResult> {
  const result: SensorCopyResult = {
    copied: [],
    alreadyPresent: [],
    conflicting: [],
    overwritten: [],
    removedInTarget: [],
  };
  const sensors = await source.registry.list();
  const { sensors: there, removals } = target.registry.listWithRemovals
    ? await target.registry.listWithRemovals()
    : { sensors: await target.registry.list(), removals: new Map<string, number>() };
  const existing = new Map(there.map((s) => [s.name, s]));
  for (const sensor of sensors) {
    const removed = removals.get(sensor.name);
    // A sensor with no time to compare stays deleted too: a withdrawn key is not brought back on a guess.
    if (removed !== undefined && !(sensorMadeAt(sensor) > removed)) {
      result.removedInTarget.push(sensor.name);
      continue;
    }
    const outcome = options.dryRun
      ? dryRunOutcome(existing.get(sensor.name), sensor, options.overwriteSensors)
      : await target.registry.importSensor(sensor, { overwrite: options.overwriteSensors });
    if (outcome === 'created') result.copied.push(sensor.name);
    else if (outcome === 'unchanged') result.alreadyPresent.push(sensor.name);
    else if (outcome === 'conflict') result.conflicting.push(sensor.name);
    else result.overwritten.push(sensor.name);
  }
  return result;
}

/** When a sensor was last issued or given a key (epoch ms): one made after the target deleted its name is new. */
function sensorMadeAt(sensor: Sensor): number {
  return Math.max(Date.parse(sensor.created_at), ...sensor.keys.map((k) => Date.parse(k.created_at)));
}

function dryRunOutcome(there: Sensor | undefined, sensor: Sensor, overwrite: boolean): SensorImport {
  if (!there) return 'created';
  if (sameSensor(there, sensor)) return 'unchanged';
  return overwrite ? 'overwritten' : 'conflict';
}

/**
 * The decisions (src/decisions/): blocks, allow entries, feeds with their password hashes, removed blocks not to
 * be made again from old records, repeat offenders, feeds' last fetches and the rules' history, each stored as
 * it is, in one write. An entry the target already holds is skipped when the same, and left as it is when not
 * (a collector on the target made or changed it since: newer than the copy). An entry the target removed (a run
 * before copied it, then `block remove`, `allow remove`, `feed remove` there) stays removed, unless the source's
 * was made after the removal; a block the source removed since (its `cleared` mark newer than the block) is
 * removed there too. In a dry run the target is only read.
 */
export async function copyDecisions(
  source: Store,
  target: Store,
  options: CopyOptions,
): Promise<DecisionCopyResult> {
  const { state: there, removals } = target.decisions.readWithRemovals
    ? await target.decisions.readWithRemovals()
    : { state: await target.decisions.read(), removals: new Map<string, number>() };
  const result: DecisionCopyResult = { copied: 0, alreadyPresent: 0, leftInTarget: [], onlyInTarget: [] };
  const changes: DecisionChange[] = [];
  const ours = await source.decisions.read();
  // A block the target holds that the source removed after it was made (`block remove` there since an earlier
  // run copied it: its `cleared` mark says when) goes, as the removal did in the source.
  for (const [unit, cleared] of ours.cleared) {
    // A block by hand's own end is no removal: a block the target holds of that address is its own to end.
    if (cleared.ended) continue;
    const block = there.blocks.get(unit);
    if (block && !ours.blocks.has(unit) && Date.parse(block.since) <= Date.parse(cleared.at)) {
      // Only while the target still holds it as read: one made there since stays.
      changes.push({ kind: 'block', key: unit, value: null, ifStill: block });
      result.copied++;
    }
  }
  for (const entry of decisionEntries(ours)) {
    const name = `${entry.kind} ${entry.key}`;
    const theirs = (there[MAP_OF[entry.kind]] as Map<string, unknown>).get(entry.key);
    const removed = removals.get(name);
    if (theirs === undefined && (removed === undefined || madeAt(entry as DecisionChange) > removed)) {
      changes.push(entry as DecisionChange);
      result.copied++;
    } else if (theirs !== undefined && isDeepStrictEqual(theirs, entry.value)) result.alreadyPresent++;
    else result.leftInTarget.push(name);
  }
  for (const kind of ['allow', 'feed'] as const)
    for (const key of (there[MAP_OF[kind]] as Map<string, unknown>).keys())
      if (!(ours[MAP_OF[kind]] as Map<string, unknown>).has(key)) result.onlyInTarget.push(`${kind} ${key}`);
  if (!options.dryRun && changes.length > 0) await target.decisions.apply(changes);
  return result;
}

/**
 * When a decision entry was made or last changed, by its own times (epoch ms; NaN when it names none): one made
 * after the target removed its key is a new one.
 */
function madeAt(entry: DecisionChange): number {
  const time = (t: string | null | undefined) => (t ? Date.parse(t) : Number.NaN);
  switch (entry.kind) {
    case 'block':
    case 'allow':
      return time(entry.value?.since);
    case 'feed':
      return time(entry.value?.rotatedAt ?? entry.value?.createdAt);
    case 'cleared':
    case 'fetch':
      return time(entry.value?.at);
    case 'offence':
      return time(entry.value?.last);
    case 'rule': {
      const r = entry.value;
      return r
        ? Math.max(...[r.since, r.lastMatch, r.lastBlock].map((t) => (t ? Date.parse(t) : 0)))
        : Number.NaN;
    }
  }
}

/**
 * Records: first the ids the target already holds (a full pass over the target, so that a re-run long after
 * the first, past any duplicate window, still skips them), then the source oldest first, in batches; each
 * record keeps every field and is published with its id as the dedupe id (a batch interrupted and re-run
 * within the target's duplicate window is not stored twice even before the id pass sees it).
 */
export async function copyRecords(
  source: Store,
  target: Store,
  options: CopyOptions,
): Promise<RecordCopyResult> {
  const present = new Set<string>();
  const progress = { read: 0, copied: 0, alreadyPresent: 0 };
  const report = (phase: CopyProgress['phase']) => options.onProgress?.({ phase, ...progress });

  let idsRead = 0;
  await target.reader.scan(
    0,
    (record) => {
      present.add(record.id);
      if (++idsRead % 10_000 === 0)
        options.onProgress?.({ phase: 'ids', read: idsRead, copied: 0, alreadyPresent: 0 });
    },
    options.signal,
  );

  const log = options.dryRun ? null : await target.openRecordLog({ retentionIntervalMs: 0 });
  const size = options.batchSize ?? DEFAULT_BATCH;
  let batch: StoredRecord[] = [];
  const flush = async () => {
    const records = batch;
    batch = [];
    if (records.length === 0) return;
    if (log) await log.append(records);
    progress.copied += records.length;
    report('records');
  };
  const skippedBefore = source.reader.skippedCount();
  try {
    await source.reader.scan(
      0,
      (record) => {
        progress.read++;
        if (present.has(record.id)) {
          progress.alreadyPresent++;
          if (progress.alreadyPresent % 10_000 === 0) report('records');
          return;
        }
        // Marked at once: a source holding one id twice (never written so, but cheap to guard) stores it once.
        present.add(record.id);
        batch.push(record);
        if (batch.length >= size) return flush();
      },
      options.signal,
    );
    await flush();
  } finally {
    await log?.close();
  }
  return { ...progress, notRecords: source.reader.skippedCount() - skippedBefore };
}
