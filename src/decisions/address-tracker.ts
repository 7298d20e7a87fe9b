// What the engine remembers per address unit and rule: the newest record times (as many as the rule's
// minRecords) and the newest time of each sensor (as many as its minSensors), bounded by blocklist.maxTracked
// units, the least recently seen dropped first and counted.
import type { CompiledRule } from './rules.js';

interface Window {
  /** Times (epoch ms) of the newest records, oldest first, at most the rule's minRecords. */
  times: number[];
  /** Criticality of each record in `times`. */
  criticalities: number[];
  /** Newest time per sensor, at most the rule's minSensors sensors (the most recent ones). */
  sensors: Map<string, number>;
}

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
      windows = [];
      if (this.units.size >= this.maxTracked) {
        const oldest = this.units.keys().next().value as string;
        this.units.delete(oldest);
        this.dropped++;
      }
    } else {
      this.units.delete(unit);
    }
    this.units.set(unit, windows);
    let window = windows[index];
    if (window === undefined) {
      window = { times: [], criticalities: [], sensors: new Map() };
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
  window.times.forEach((t, i) => {
    if (t < from || t > at) return;
    records++;
    criticality = Math.max(criticality, window.criticalities[i] as number);
  });
  if (records < rule.minRecords) return null;
  const sensors = [...window.sensors].filter(([, t]) => t >= from && t <= at).map(([s]) => s);
  if (sensors.length < rule.minSensors) return null;
  return { records, sensors: sensors.sort(), criticality };
}

/** Keeps the newest `keep` times in order (records of several workers may arrive a little out of order). */
function addTime(window: Window, at: number, criticality: number, keep: number): void {
  let i = window.times.length;
  while (i > 0 && (window.times[i - 1] as number) > at) i--;
  window.times.splice(i, 0, at);
  window.criticalities.splice(i, 0, criticality);
  if (window.times.length > keep) {
    window.times.shift();
    window.criticalities.shift();
  }
}

function addSensor(window: Window, sensor: string, at: number, keep: number): void {
  const before = window.sensors.get(sensor);
  if (before !== undefined && before >= at) return;
  window.sensors.set(sensor, at);
  if (window.sensors.size <= keep) return;
  let oldest: string | null = null;
  let oldestAt = Number.POSITIVE_INFINITY;
  for (const [s, t] of window.sensors) {
    if (t < oldestAt) {
      oldest = s;
      oldestAt = t;
    }
  }
  if (oldest !== null) window.sensors.delete(oldest);
}
