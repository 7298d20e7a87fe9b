// What the engine remembers per address unit and rule: the newest record times (as many as the rule's
// minRecords) and the newest time of each sensor (as many as its minSensors), bounded by blocklist.maxTracked
// units, the least recently seen dropped first and counted.
import type { CompiledRule } from './rules.js';

interface Window {
  /** Times (epoch ms) of the newest records, oldest first, at most the rule's minRecords. */
  times: number[];
  /** Criticality of each record in `times`. */
  criticalities: number[];
  /**
   * Sensors and the newest time of each, at most the rule's minSensors (the most recent ones): two small
   * arrays, not a Map, as a million units are kept (a Map costs some 200 bytes even with one entry).
   */
  sensors: string[];
  sensorTimes: number[];
}

/** Shared by new windows until their first record replaces them (they are never written in place). */
const EMPTY: number[] = [];
const NO_SENSORS: string[] = [];

/** A rule's thresholds met by the records about one unit. */
export interface Met {
  records: number;
  sensors: string[];
  criticality: number;
}

export class AddressTracker {
  /** By unit (insertion order is recency: a touched unit moves to the end). */
  private readonly units = new Map<string, (Window | undefined)[]>();
  /** Units dropped because maxTracked was reached. */
  dropped = 0;

  constructor(private readonly maxTracked: number) {}

  get size(): number {
    return this.units.size;
  }

  /**
   * Counts one record about `unit` for rule number `index`, then says whether the rule's thresholds are met
   * within its window ending at `at`, counting only records after `notBefore` (a `block remove`).
   */
  observe(
    unit: string,
    index: number,
    rule: CompiledRule,
    record: { at: number; sensor: string; criticality: number },
    notBefore: number,
  ): Met | null {
    let windows = this.units.get(unit);
    if (windows === undefined) {
      // Exactly as long as needed (an empty array's first store reserves 17 slots: a million units kept).
      windows = new Array<Window | undefined>(index + 1);
      if (this.units.size >= this.maxTracked) {
        const oldest = this.units.keys().next().value as string;
        this.units.delete(oldest);
        this.dropped++;
      }
    } else {
      this.units.delete(unit);
    }
    if (index >= windows.length)
      windows = windows.concat(new Array<Window | undefined>(index + 1 - windows.length));
    this.units.set(unit, windows);
    let window = windows[index];
    if (window === undefined) {
      window = { times: EMPTY, criticalities: EMPTY, sensors: NO_SENSORS, sensorTimes: EMPTY };
      windows[index] = window;
    }
    addTime(window, record.at, record.criticality, rule.minRecords);
    addSensor(window, record.sensor, record.at, rule.minSensors);
    return measure(window, rule, record.at, notBefore);
  }

  /**
   * The thresholds of rule number `index` over what is kept of `unit`, at its newest record, counting only
   * records after `notBefore` (a `block remove` seen after the records that came since it were counted).
   */
  evaluate(
    unit: string,
    index: number,
    rule: CompiledRule,
    notBefore: number,
  ): { at: number; met: Met } | null {
    const window = this.units.get(unit)?.[index];
    const at = window?.times.at(-1);
    if (window === undefined || at === undefined) return null;
    const met = measure(window, rule, at, notBefore);
    return met === null ? null : { at, met };
  }
}

function measure(window: Window, rule: CompiledRule, at: number, notBefore: number): Met | null {
  const from = Math.max(at - rule.withinMs, notBefore + 1);
  let records = 0;
  let criticality = 0;
  const { times, criticalities } = window;
  for (let i = 0; i < times.length; i++) {
    const t = times[i] as number;
    if (t < from || t > at) continue;
    records++;
    if ((criticalities[i] as number) > criticality) criticality = criticalities[i] as number;
  }
  if (records < rule.minRecords) return null;
  const sensors: string[] = [];
  for (let i = 0; i < window.sensors.length; i++) {
    const t = window.sensorTimes[i] as number;
    if (t >= from && t <= at) sensors.push(window.sensors[i] as string);
  }
  if (sensors.length < rule.minSensors) return null;
  if (sensors.length > 1) sensors.sort();
  return { records, sensors, criticality };
}

/**
 * `values` with `value` put at `i`, the oldest dropped beyond `keep`. A full array (the usual case: a unit
 * seen again) is changed in place; a growing one is made anew at its exact length (growing an array in
 * place reserves 17 slots or more, for each of up to a million units).
 */
function insertAt(values: number[], i: number, value: number, keep: number): number[] {
  const n = values.length;
  if (n >= keep && n > 0) {
    // Full: the oldest leaves (when the new one is not older than all of them).
    if (i === 0) return values;
    for (let k = 0; k < i - 1; k++) values[k] = values[k + 1] as number;
    values[i - 1] = value;
    return values;
  }
  const out = new Array<number>(n + 1);
  for (let k = 0; k < i; k++) out[k] = values[k] as number;
  out[i] = value;
  for (let k = i; k < n; k++) out[k + 1] = values[k] as number;
  return out;
}

/** Keeps the newest `keep` times in order (records of several workers may arrive a little out of order). */
function addTime(window: Window, at: number, criticality: number, keep: number): void {
  let i = window.times.length;
  while (i > 0 && (window.times[i - 1] as number) > at) i--;
  window.times = insertAt(window.times, i, at, keep);
  window.criticalities = insertAt(window.criticalities, i, criticality, keep);
}

/** The sensor's newest time, the most recent `keep` sensors kept; arrays at their exact length, as above. */
function addSensor(window: Window, sensor: string, at: number, keep: number): void {
  const i = window.sensors.indexOf(sensor);
  if (i !== -1) {
    if ((window.sensorTimes[i] as number) < at) window.sensorTimes[i] = at;
    return;
  }
  if (window.sensors.length === 0) {
    window.sensors = [sensor];
    window.sensorTimes = [at];
    return;
  }
  let sensors = window.sensors.concat([sensor]);
  let times = window.sensorTimes.concat([at]);
  if (sensors.length > keep) {
    let oldest = 0;
    for (let k = 1; k < times.length; k++) if ((times[k] as number) < (times[oldest] as number)) oldest = k;
    sensors = sensors.filter((_s, k) => k !== oldest);
    times = times.filter((_t, k) => k !== oldest);
  }
  window.sensors = sensors;
  window.sensorTimes = times;
}
