// A fixed-size top-K counter (Space-Saving, Metwally et al. 2005): at most `capacity` names, O(1) per count.
// Any name seen more than total/capacity times is held; a held name's count is at most `total/capacity`
// over its true count (the count it inherited when it took an evicted name's place). A name is a string or a
// number (an AS: counted by its number, its label kept beside it, so no string is made for each count).

export interface SketchEntry {
  name: string;
  count: number;
}

/** A held key with its label (the first one it was counted with) and its (over-)estimated count. */
export interface KeyedEntry<K> {
  key: K;
  label: string;
  count: number;
}

/** The names sharing one count, in a list ordered by count: the lowest is the one an eviction takes from. */
interface Group {
  count: number;
  slots: Set<Slot>;
  prev: Group | null;
  next: Group | null;
}

interface Slot {
  name: string | number;
  label: string;
  group: Group;
}

export class SpaceSaving<K extends string | number = string> {
  private readonly slots = new Map<K, Slot>();
  private lowest: Group | null = null;
  private heldChars = 0;
  private dropped = false;

  constructor(readonly capacity: number) {}

  /** Counts one occurrence of `name`; `label` is kept with it when it is new (an AS's name). */
  add(name: K, label = ''): void {
    const slot = this.slots.get(name);
    if (slot) {
      this.bump(slot);
      return;
    }
    if (this.slots.size < this.capacity) {
      const one = this.lowest?.count === 1 ? this.lowest : this.groupBefore(this.lowest, 1);
      const fresh: Slot = { name: own(name), label: own(label), group: one };
      one.slots.add(fresh);
      this.slots.set(fresh.name as K, fresh);
      this.heldChars += charsOf(fresh);
      return;
    }
    // Full: the new name takes the place (and the count) of one of the least counted names.
    this.dropped = true;
    const lowest = this.lowest as Group;
    const victim = lowest.slots.values().next().value as Slot;
    this.slots.delete(victim.name as K);
    this.heldChars -= charsOf(victim);
    victim.name = own(name);
    victim.label = own(label);
    this.slots.set(victim.name as K, victim);
    this.heldChars += charsOf(victim);
    this.bump(victim);
  }

  /** Every held name with its (over-)estimated count, in no order. */
  entries(): SketchEntry[] {
    return [...this.slots.values()].map((s) => ({ name: String(s.name), count: s.group.count }));
  }

  /** Every held name as counted, with its label and (over-)estimated count, in no order. */
  keyedEntries(): KeyedEntry<K>[] {
    return [...this.slots.values()].map((s) => ({ key: s.name as K, label: s.label, count: s.group.count }));
  }

  /** True once a name was dropped for another: the counts are estimates from then on. */
  get evicted(): boolean {
    return this.dropped;
  }

  /** Names held and their characters, for the bounds the tests check. */
  get size(): { names: number; chars: number } {
    return { names: this.slots.size, chars: this.heldChars };
  }

  private bump(slot: Slot): void {
    const from = slot.group;
    const target = from.next?.count === from.count + 1 ? from.next : this.groupAfter(from, from.count + 1);
    from.slots.delete(slot);
    target.slots.add(slot);
    slot.group = target;
    if (from.slots.size === 0) this.unlink(from);
  }

  private groupBefore(next: Group | null, count: number): Group {
    const group: Group = { count, slots: new Set(), prev: null, next };
    if (next) next.prev = group;
    this.lowest = group;
    return group;
  }

  private groupAfter(prev: Group, count: number): Group {
    const group: Group = { count, slots: new Set(), prev, next: prev.next };
    if (prev.next) prev.next.prev = group;
    prev.next = group;
    return group;
  }

  private unlink(group: Group): void {
    if (group.prev) group.prev.next = group.next;
    else this.lowest = group.next;
    if (group.next) group.next.prev = group.prev;
  }
}

/**
 * A copy that holds only its own characters: V8 may keep a substring as a view of the whole string it was cut
 * from, so a 200-character cut of a 4,096-character name could keep all 4,096 alive.
 */
function own<T extends string | number>(name: T): T {
  // UTF-16 both ways: every code unit comes back as it was, a lone surrogate too (UTF-8 would replace it).
  return typeof name === 'string' && name.length > 12
    ? (Buffer.from(name, 'utf16le').toString('utf16le') as T)
    : name;
}

/** The characters a slot holds (a number: none). */
function charsOf(slot: Slot): number {
  return (typeof slot.name === 'string' ? slot.name.length : 0) + slot.label.length;
}
