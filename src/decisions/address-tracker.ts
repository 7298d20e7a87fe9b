// What the engine remembers per address unit and rule: the newest record times (as many as the rule's
// minRecords) and the newest time of each sensor (as many as its minSensors), bounded by blocklist.maxTracked
// units, the least recently seen dropped first and counted.
import type { CompiledRule } from './rules.js';

/**
 * Where rule number `index` keeps its window in a unit's numbers: `records` slots of record times (oldest
 * first, an empty slot -Infinity, so a window that is not full starts with them), as many of their
 * criticalities, then `sensors` slots of a sensor's number (-1: empty) and as many of that sensor's newest time.
 */
interface Slots {
  start: number;
  records: number;
  sensors: number;
}

const EMPTY_TIME = Number.NEGATIVE_INFINITY;
const NO_SENSOR = -1;

/** A rule's thresholds met by the records about one unit. */
export interface Met {
  records: number;
  sensors: string[];
  criticality: number;
}

export class AddressTracker {
  /**
   * By unit (insertion order is recency: a touched unit moves to the end): every rule's window in one array
   * of numbers (Slots), the least a unit can cost: a million units are kept, and what the engine keeps is what
   * the garbage collector walks and copies (one array each, not an array, an object and four arrays per rule).
   */
  private readonly units = new Map<string, number[]>();
  /** The rules' windows by rule number, laid out as rules are first seen; `width` numbers in all. */
  private readonly slots: (Slots | undefined)[] = [];
  private width = 0;
  /** A new unit's numbers, every slot empty (copied: a copy keeps its elements' kind, unboxed doubles). */
  private blank: number[] = [];
  /** Sensors by number, and their numbers (registered sensors: a few, kept as long as the tracker). */
  private readonly sensorNames: string[] = [];
  private readonly sensorNumbers = new Map<string, number>();
  /** The unit observed last: the last in `units`. */
  private newest: string | null = null;
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
    const slots = this.slotsOf(index, rule);
    let numbers = this.units.get(unit);
    if (numbers === undefined) {
      numbers = this.blank.slice();
      if (this.units.size >= this.maxTracked) {
        const oldest = this.units.keys().next().value as string;
        this.units.delete(oldest);
        this.dropped++;
      }
      this.units.set(unit, numbers);
    } else if (unit !== this.newest || numbers.length < this.width) {
      // Moved to the end, the most recent (not again for another rule of the same record: it is there).
      this.units.delete(unit);
      // Kept from before a rule was first seen: made as wide as the rules now are.
      if (numbers.length < this.width) numbers = numbers.concat(this.blank.slice(numbers.length));
      this.units.set(unit, numbers);
    }
    this.newest = unit;
    addTime(numbers, slots, record.at, record.criticality);
    addSensor(numbers, slots, this.sensorNumber(record.sensor), record.at);
    return this.measure(numbers, slots, rule, record.at, notBefore);
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
    const numbers = this.units.get(unit);
    const slots = this.slots[index];
    if (numbers === undefined || slots === undefined || numbers.length < slots.start + slotsWidth(slots))
      return null;
    const at = numbers[slots.start + slots.records - 1] as number;
    if (at === EMPTY_TIME) return null;
    const met = this.measure(numbers, slots, rule, at, notBefore);
    return met === null ? null : { at, met };
  }

  private slotsOf(index: number, rule: CompiledRule): Slots {
    let slots = this.slots[index];
    if (slots === undefined) {
      // Laid out at the end, the first time the rule is seen (the engine's rules do not change: a reload
      // makes a new tracker).
      slots = {
        start: this.width,
        records: Math.max(1, rule.minRecords),
        sensors: Math.max(1, rule.minSensors),
      };
      this.slots[index] = slots;
      const blank = this.blank.slice();
      for (let i = 0; i < slots.records; i++) blank.push(EMPTY_TIME);
      for (let i = 0; i < slots.records; i++) blank.push(0);
      for (let i = 0; i < slots.sensors; i++) blank.push(NO_SENSOR);
      for (let i = 0; i < slots.sensors; i++) blank.push(EMPTY_TIME);
      this.blank = blank;
      this.width = blank.length;
    }
    return slots;
  }

  private sensorNumber(sensor: string): number {
    let n = this.sensorNumbers.get(sensor);
    if (n === undefined) {
      n = this.sensorNames.length;
      this.sensorNames.push(sensor);
      this.sensorNumbers.set(sensor, n);
    }
    return n;
  }

  private measure(
    numbers: number[],
    slots: Slots,
    rule: CompiledRule,
    at: number,
    notBefore: number,
  ): Met | null {
    const from = Math.max(at - rule.withinMs, notBefore + 1);
    let records = 0;
    let criticality = 0;
    const times = slots.start;
    const criticalities = times + slots.records;
    for (let i = 0; i < slots.records; i++) {
      const t = numbers[times + i] as number;
      if (t < from || t > at) continue;
      records++;
      const c = numbers[criticalities + i] as number;
      if (c > criticality) criticality = c;
    }
    if (records < rule.minRecords) return null;
    // Counted first: most records about an address meet no rule, and make no list.
    const sensorsAt = criticalities + slots.records;
    const timesAt = sensorsAt + slots.sensors;
    let count = 0;
    for (let i = 0; i < slots.sensors; i++) {
      const t = numbers[timesAt + i] as number;
      if (t >= from && t <= at) count++;
    }
    if (count < rule.minSensors) return null;
    const sensors: string[] = [];
    for (let i = 0; i < slots.sensors; i++) {
      const t = numbers[timesAt + i] as number;
      if (t >= from && t <= at) sensors.push(this.sensorNames[numbers[sensorsAt + i] as number] as string);
    }
    if (sensors.length > 1) sensors.sort();
    return { records, sensors, criticality };
  }
}

const slotsWidth = (slots: Slots) => slots.records * 2 + slots.sensors * 2;

/**
 * Keeps the newest times in order, with their criticalities (records of several workers may arrive a little
 * out of order): the oldest leaves when the window is full, unless the new one is older than all of them.
 */
function addTime(numbers: number[], slots: Slots, at: number, criticality: number): void {
  const times = slots.start;
  const criticalities = times + slots.records;
  let i = slots.records;
  while (i > 0 && (numbers[times + i - 1] as number) > at) i--;
  if (i === 0) return;
  for (let k = 0; k < i - 1; k++) {
    numbers[times + k] = numbers[times + k + 1] as number;
    numbers[criticalities + k] = numbers[criticalities + k + 1] as number;
  }
  numbers[times + i - 1] = at;
  numbers[criticalities + i - 1] = criticality;
}

/**
 * The sensor's newest time, the most recent sensors kept: a new sensor takes an empty slot, else the one of the
 * oldest time (the first of equals), unless it is older than all of them.
 */
function addSensor(numbers: number[], slots: Slots, sensor: number, at: number): void {
  const sensorsAt = slots.start + slots.records * 2;
  const timesAt = sensorsAt + slots.sensors;
  let oldest = 0;
  for (let i = 0; i < slots.sensors; i++) {
    if (numbers[sensorsAt + i] === sensor) {
      if ((numbers[timesAt + i] as number) < at) numbers[timesAt + i] = at;
      return;
    }
    if ((numbers[timesAt + i] as number) < (numbers[timesAt + oldest] as number)) oldest = i;
  }
  if (at < (numbers[timesAt + oldest] as number)) return;
  numbers[sensorsAt + oldest] = sensor;
  numbers[timesAt + oldest] = at;
}
