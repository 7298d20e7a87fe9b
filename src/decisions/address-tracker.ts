// What the engine remembers per address unit and rule: the newest record times (as many as the rule's
// minRecords), each with which record it is, and the newest time of each sensor (as many as its minSensors),
// bounded by blocklist.maxTracked units, the least recently seen dropped first and counted. A record counted
// again (a batch read again after a failed write or ack, a scan's records handed over again by the cursor) is
// counted once.
import type { CompiledRule } from './rules.js';

/**
 * Where rule number `index` keeps its window in a unit's numbers: `records` slots of record times (oldest
 * first, an empty slot -Infinity, so a window that is not full starts with them), as many of their tags (the
 * record's id and criticality, tagOf), then `sensors` slots of a sensor's number (-1: empty) and as many of that
 * sensor's newest time.
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

/**
 * A unit as the tracker keys it: an IPv4 address whose unit is its /32 as its 32-bit number (most records: no
 * text made, no string hashed), anything else as its unit's text (`2001:db8::/64`, `192.0.2.0/24`).
 */
export type UnitKey = number | string;

const NO_ROW = -1;

export class AddressTracker {
  /** Units keyed by text, and their rows. */
  private readonly named = new Map<string, number>();
  /**
   * Units keyed by number, by open addressing: `numberKeys[i]` holds a unit's number where `numberRows[i]` holds
   * its row (NO_ROW: a free slot). Kept at most half full.
   */
  private numberKeys = new Uint32Array(0);
  private numberRows = new Int32Array(0);
  /** Each row's unit: its number (numeric units), or its text (rows of the others). */
  private rowNumbers = new Float64Array(0);
  private readonly rowNames: (string | undefined)[] = [];
  /**
   * Recency: rows linked from the least recently seen (`oldest`) to the most (`newest`), so that at the bound the
   * least recently seen unit leaves first; a touched unit moves to the end.
   */
  private before = new Int32Array(0);
  private after = new Int32Array(0);
  private oldest = NO_ROW;
  private newest = NO_ROW;
  /** Units kept: rows 0 to count - 1. */
  private count = 0;
  /** The rules' windows by rule number, laid out as rules are first seen; `width` numbers a row in all. */
  private readonly slots: (Slots | undefined)[] = [];
  private width = 0;
  /** A new row's numbers, every slot empty. */
  private blank = new Float64Array(0);
  /**
   * Every unit's row of `width` numbers (Slots), `capacity` rows. A million units are kept, and what the engine
   * keeps is what the garbage collector walks: no object, array or string per IPv4 unit.
   */
  private table = new Float64Array(0);
  private capacity = 0;
  /** Sensors by number, and their numbers (registered sensors: a few, kept as long as the tracker). */
  private readonly sensorNames: string[] = [];
  private readonly sensorNumbers = new Map<string, number>();
  /** Units dropped because maxTracked was reached. */
  dropped = 0;

  constructor(private maxTracked: number) {}

  get size(): number {
    return this.count;
  }

  /**
   * Takes a new bound on the units kept (a reload of blocklist.maxTracked), when the units kept fit in it; false
   * when more are kept (the caller starts a new tracker).
   */
  rebound(maxTracked: number): boolean {
    if (this.count > maxTracked) return false;
    this.maxTracked = maxTracked;
    return true;
  }

  /**
   * Counts one record about `unit` for rule number `index`, then says whether the rule's thresholds are met
   * within its window ending at `at`, counting only records after `notBefore` (a `block remove`).
   */
  observe(
    unit: UnitKey,
    index: number,
    rule: CompiledRule,
    record: { at: number; sensor: string; criticality: number; id: string },
    notBefore: number,
  ): Met | null {
    const slots = this.slotsOf(index, rule);
    let row = this.rowOf(unit);
    if (row === NO_ROW) {
      if (this.count >= this.maxTracked && this.count > 0) {
        // The least recently seen unit leaves, and the new one takes its row.
        row = this.oldest;
        this.forget(row);
        this.unlink(row);
        this.dropped++;
      } else row = this.newRow();
      const width = this.width;
      for (let i = 0, at = row * width; i < width; i++) this.table[at + i] = this.blank[i] as number;
      this.index(unit, row);
      this.link(row);
    } else if (row !== this.newest) {
      // Moved to the end, the most recent (not again for another rule of the same record: it is there).
      this.unlink(row);
      this.link(row);
    }
    const base = row * this.width + slots.start;
    const table = this.table;
    addTime(table, base, slots.records, record.at, tagOf(record.id, record.criticality));
    addSensor(table, base + slots.records * 2, slots.sensors, this.sensorNumber(record.sensor), record.at);
    return this.measure(table, base, slots, rule, record.at, notBefore);
  }

  /**
   * The thresholds of rule number `index` over what is kept of `unit`, at its newest record, counting only
   * records after `notBefore` (a `block remove` seen after the records that came since it were counted).
   */
  evaluate(
    unit: UnitKey,
    index: number,
    rule: CompiledRule,
    notBefore: number,
  ): { at: number; met: Met } | null {
    const row = this.rowOf(unit);
    const slots = this.slots[index];
    if (row === NO_ROW || slots === undefined) return null;
    const base = row * this.width + slots.start;
    const at = this.table[base + slots.records - 1] as number;
    if (at === EMPTY_TIME) return null;
    const met = this.measure(this.table, base, slots, rule, at, notBefore);
    return met === null ? null : { at, met };
  }

  /** The row of `unit`, or NO_ROW. */
  private rowOf(unit: UnitKey): number {
    if (typeof unit === 'string') return this.named.get(unit) ?? NO_ROW;
    const keys = this.numberKeys;
    const rows = this.numberRows;
    if (rows.length === 0) return NO_ROW;
    const mask = rows.length - 1;
    for (let i = hashOf(unit) & mask; ; i = (i + 1) & mask) {
      const row = rows[i] as number;
      if (row === NO_ROW || keys[i] === unit) return row;
    }
  }

  /** Files `unit` under `row`. */
  private index(unit: UnitKey, row: number): void {
    if (typeof unit === 'string') {
      this.named.set(unit, row);
      this.rowNames[row] = unit;
      return;
    }
    this.rowNumbers[row] = unit;
    const keys = this.numberKeys;
    const rows = this.numberRows;
    const mask = rows.length - 1;
    let i = hashOf(unit) & mask;
    while (rows[i] !== NO_ROW) i = (i + 1) & mask;
    keys[i] = unit;
    rows[i] = row;
  }

  /** Takes the unit of `row` out of its index (its row is taken over at once). */
  private forget(row: number): void {
    const name = this.rowNames[row];
    if (name !== undefined) {
      this.named.delete(name);
      this.rowNames[row] = undefined;
      return;
    }
    const keys = this.numberKeys;
    const rows = this.numberRows;
    const mask = rows.length - 1;
    let i = hashOf(this.rowNumbers[row] as number) & mask;
    while (rows[i] !== row) i = (i + 1) & mask;
    // Backward-shift deletion: the entries after it in its run move up where their probe allows, so that a
    // look-up never stops at a hole before its key.
    for (let j = (i + 1) & mask; rows[j] !== NO_ROW; j = (j + 1) & mask) {
      const home = hashOf(keys[j] as number) & mask;
      // Movable into i when its home is not within (i, j], cyclically.
      if (i <= j ? home <= i || home > j : home <= i && home > j) {
        keys[i] = keys[j] as number;
        rows[i] = rows[j] as number;
        i = j;
      }
    }
    rows[i] = NO_ROW;
  }

  /** Appends `row` to the recency list (the most recent). */
  private link(row: number): void {
    this.before[row] = this.newest;
    this.after[row] = NO_ROW;
    if (this.newest === NO_ROW) this.oldest = row;
    else this.after[this.newest] = row;
    this.newest = row;
  }

  private unlink(row: number): void {
    const before = this.before[row] as number;
    const after = this.after[row] as number;
    if (before === NO_ROW) this.oldest = after;
    else this.after[before] = after;
    if (after === NO_ROW) this.newest = before;
    else this.before[after] = before;
  }

  /** A row for a new unit: the next one, the tables grown (doubled, up to maxTracked rows) when full. */
  private newRow(): number {
    const row = this.count++;
    // Every row has its slot (a dense array, 4 bytes a row), a numeric unit's empty.
    this.rowNames.push(undefined);
    if (row >= this.capacity) {
      const capacity = Math.max(row + 1, Math.min(this.maxTracked, Math.max(1024, this.capacity * 2)));
      this.table = grown(this.table, capacity * this.width);
      this.rowNumbers = grown(this.rowNumbers, capacity);
      this.before = grown(this.before, capacity);
      this.after = grown(this.after, capacity);
      this.capacity = capacity;
      // The numeric index at most half full: rebuilt at twice the rows' capacity (a power of two).
      let slots = 1;
      while (slots < capacity * 2) slots *= 2;
      const keys = new Uint32Array(slots);
      const rows = new Int32Array(slots).fill(NO_ROW);
      const mask = slots - 1;
      for (let i = 0; i < this.numberRows.length; i++) {
        const r = this.numberRows[i] as number;
        if (r === NO_ROW) continue;
        const key = this.numberKeys[i] as number;
        let j = hashOf(key) & mask;
        while (rows[j] !== NO_ROW) j = (j + 1) & mask;
        keys[j] = key;
        rows[j] = r;
      }
      this.numberKeys = keys;
      this.numberRows = rows;
    }
    return row;
  }

  private slotsOf(index: number, rule: CompiledRule): Slots {
    let slots = this.slots[index];
    if (slots === undefined) {
      // Laid out at the end, the first time the rule is seen (the engine's rules do not change: a reload that
      // changes them makes a new tracker); the rows kept so far are made as wide, the new rule's slots empty.
      slots = {
        start: this.width,
        records: Math.max(1, rule.minRecords),
        sensors: Math.max(1, rule.minSensors),
      };
      this.slots[index] = slots;
      const added = [
        ...Array<number>(slots.records).fill(EMPTY_TIME),
        ...Array<number>(slots.records).fill(0),
        ...Array<number>(slots.sensors).fill(NO_SENSOR),
        ...Array<number>(slots.sensors).fill(EMPTY_TIME),
      ];
      const was = this.width;
      const blank = new Float64Array(was + added.length);
      blank.set(this.blank);
      blank.set(added, was);
      const table = new Float64Array(this.capacity * blank.length);
      for (let row = 0; row < this.count; row++) {
        table.set(this.table.subarray(row * was, row * was + was), row * blank.length);
        table.set(added, row * blank.length + was);
      }
      this.table = table;
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

  /** The rule's thresholds over its window at `base` in `table` (its record times first). */
  private measure(
    table: Float64Array,
    base: number,
    slots: Slots,
    rule: CompiledRule,
    at: number,
    notBefore: number,
  ): Met | null {
    const from = Math.max(at - rule.withinMs, notBefore + 1);
    let records = 0;
    let criticality = 0;
    const tags = base + slots.records;
    for (let i = 0; i < slots.records; i++) {
      const t = table[base + i] as number;
      if (t < from || t > at) continue;
      records++;
      const c = (table[tags + i] as number) % CRITICALITY_VALUES;
      if (c > criticality) criticality = c;
    }
    if (records < rule.minRecords) return null;
    // Counted first: most records about an address meet no rule, and make no list.
    const sensorsAt = tags + slots.records;
    const timesAt = sensorsAt + slots.sensors;
    let count = 0;
    for (let i = 0; i < slots.sensors; i++) {
      const t = table[timesAt + i] as number;
      if (t >= from && t <= at) count++;
    }
    if (count < rule.minSensors) return null;
    const sensors: string[] = [];
    for (let i = 0; i < slots.sensors; i++) {
      const t = table[timesAt + i] as number;
      if (t >= from && t <= at) sensors.push(this.sensorNames[table[sensorsAt + i] as number] as string);
    }
    if (sensors.length > 1) sensors.sort();
    // Each sensor named sent a record within the window: with minRecords below minSensors, its slots alone
    // would count fewer records than the block names sensors.
    return { records: Math.max(records, count), sensors, criticality };
  }
}

/** A unit's number spread over the index's slots, every bit mixed (MurmurHash3's finalizer). */
function hashOf(key: number): number {
  let h = key ^ (key >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A tag holds a criticality (0-4) in its low 3 bits, above them 50 bits of the record's id: a safe integer. */
const CRITICALITY_VALUES = 8;
const ID_HIGH_BITS = 2 ** 18;

/**
 * A record's tag: its criticality, and its id hashed to 50 bits (two FNV-1a lanes of 32 and 18 bits), so that
 * the record read again is told from another one received in the same millisecond (two records about one unit
 * in one millisecond are taken for one with a chance of 2^-50). Kept where the criticality was: no memory more.
 */
function tagOf(id: string, criticality: number): number {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  b = hashOf(b) % ID_HIGH_BITS;
  return ((a >>> 0) * ID_HIGH_BITS + b) * CRITICALITY_VALUES + (criticality & (CRITICALITY_VALUES - 1));
}

/** A typed array of `length` holding `from`'s elements first. */
function grown<T extends Float64Array | Int32Array>(from: T, length: number): T {
  const to = new (from.constructor as new (length: number) => T)(length);
  to.set(from);
  return to;
}

/**
 * Keeps the newest times in order, with their tags (records of several workers may arrive a little out of
 * order): the oldest leaves when the window is full, unless the new one is older than all of them. A record
 * kept already (its time and tag) is not kept twice; one no longer kept is no newer than every time kept (they
 * are the newest seen), so taken back it leaves at once or takes the place of one of its own time: the count is
 * the same. `times`: where the window's `records` times start in `table`, their tags after them.
 */
function addTime(table: Float64Array, times: number, records: number, at: number, tag: number): void {
  const tags = times + records;
  let i = records;
  while (i > 0 && (table[times + i - 1] as number) > at) i--;
  for (let k = i - 1; k >= 0 && table[times + k] === at; k--) if (table[tags + k] === tag) return;
  if (i === 0) return;
  for (let k = 0; k < i - 1; k++) {
    table[times + k] = table[times + k + 1] as number;
    table[tags + k] = table[tags + k + 1] as number;
  }
  table[times + i - 1] = at;
  table[tags + i - 1] = tag;
}

/**
 * The sensor's newest time, the most recent sensors kept: a new sensor takes an empty slot, else the one of the
 * oldest time (the first of equals), unless it is older than all of them. `sensorsAt`: where the window's
 * `count` sensor numbers start in `table`, their times after them.
 */
function addSensor(table: Float64Array, sensorsAt: number, count: number, sensor: number, at: number): void {
  const timesAt = sensorsAt + count;
  let oldest = 0;
  for (let i = 0; i < count; i++) {
    if (table[sensorsAt + i] === sensor) {
      if ((table[timesAt + i] as number) < at) table[timesAt + i] = at;
      return;
    }
    if ((table[timesAt + i] as number) < (table[timesAt + oldest] as number)) oldest = i;
  }
  if (at < (table[timesAt + oldest] as number)) return;
  table[sensorsAt + oldest] = sensor;
  table[timesAt + oldest] = at;
}
