// A compact hash set of 128-bit dedupe keys with a 128-bit record id and a 32-bit tag each, in typed arrays:
// no object per key, so a window of a million keys costs the garbage collector nothing to trace (a Map of
// strings made dedupe cost 30% more CPU per request, mostly in GC). Open addressing, linear probing.
import { createHash } from 'node:crypto';

/** Exactly 16 bytes in base64url (the last character carries 2 bits and 4 zero bits): decoded as it is. */
const KEY_16_BYTES = /^[A-Za-z0-9_-]{21}[AQgw]$/;
const MAX_LOAD = 0.7;

/** keyBytes' result: one buffer, rewritten by every call (no allocation per key on the hot path). */
const scratch = Buffer.alloc(16);

/**
 * The key's 128 bits: a request key (16 bytes in base64url) as it is, any other text hashed. The result is
 * valid until the next call (a shared buffer): use it at once, as lookups and adds do.
 */
export function keyBytes(key: string): Buffer {
  if (KEY_16_BYTES.test(key)) scratch.write(key, 0, 16, 'base64url');
  else createHash('sha256').update(key).digest().copy(scratch, 0, 0, 16);
  return scratch;
}

/**
 * Words per slot, side by side: the key's four, the id's 16 bytes as four, the tag. A claim probes a key and
 * writes its id and tag in the same slot: one cache miss on a large table, where three arrays made three.
 */
const SLOT = 9;
const ID_WORD = 4;
const TAG_WORD = 8;

export class KeyTable {
  private capacity: number;
  private slots: Uint32Array;
  /** `slots` as a Buffer, to read and write an id's bytes without copies. */
  private view: Buffer;
  /** Ids that are not UUIDs (never made by this collector, but allowed by the interface): by slot. */
  private otherIds = new Map<number, string>();
  size = 0;

  constructor(initialCapacity = 1024) {
    this.capacity = initialCapacity;
    this.slots = new Uint32Array(this.capacity * SLOT);
    this.view = Buffer.from(this.slots.buffer);
  }

  /** Bytes held (for the bound's documentation and tests). */
  get bytes(): number {
    return this.slots.byteLength;
  }

  get(key: Buffer): string | undefined {
    const slot = this.find(key);
    return slot < 0 ? undefined : this.idAt(slot);
  }

  /** The key's slot, or -1: for a caller that reads its tag before its id (valid until the next change). */
  slotOf(key: Buffer): number {
    const slot = this.find(key);
    return slot < 0 ? -1 : slot;
  }

  idAt(slot: number): string {
    return this.otherIds.get(slot) ?? formatUuid(this.view, (slot * SLOT + ID_WORD) * 4);
  }

  tagAt(slot: number): number {
    return this.slots[slot * SLOT + TAG_WORD] as number;
  }

  /** Removes the key in `slot` (from slotOf). */
  deleteSlot(slot: number): void {
    this.deleteAt(slot);
  }

  /** Adds `key` (false when it is already there). */
  add(key: Buffer, id: string, tag = 0): boolean {
    if ((this.size + 1) / this.capacity > MAX_LOAD) this.grow();
    const slot = this.find(key);
    if (slot >= 0) return false;
    this.put(-slot - 1, key, id, tag);
    this.size += 1;
    return true;
  }

  /**
   * Removes `key` (false when it is not there): a failed append's reservation. The keys after it in its
   * probe run move back into the gap (no tombstones, so lookups never probe further than before).
   */
  delete(key: Buffer): boolean {
    return this.deleteAt(this.find(key));
  }

  /** Removes the key given as its four words (as `words` copied them) if it carries `tag`. */
  deleteTagged(k0: number, k1: number, k2: number, k3: number, tag: number): boolean {
    const slot = this.findWords(k0, k1, k2, k3);
    return slot >= 0 && this.slots[slot * SLOT + TAG_WORD] === tag && this.deleteAt(slot);
  }

  /** Copies the key's four stored words into `into` at `offset` (for a caller's log of what it added). */
  words(key: Buffer, into: Uint32Array, offset: number): void {
    into[offset] = nonZero(key.readUInt32LE(0));
    into[offset + 1] = key.readUInt32LE(4);
    into[offset + 2] = key.readUInt32LE(8);
    into[offset + 3] = key.readUInt32LE(12);
  }

  private deleteAt(found: number): boolean {
    let gap = found;
    if (gap < 0) return false;
    this.otherIds.delete(gap);
    const mask = this.capacity - 1;
    const slots = this.slots;
    for (let slot = (gap + 1) & mask; slots[slot * SLOT] !== 0; slot = (slot + 1) & mask) {
      const home = this.home(slot);
      // A key may fill the gap only if its home is not in the cyclic range (gap, slot].
      if (((slot - home) & mask) < ((slot - gap) & mask)) continue;
      slots.copyWithin(gap * SLOT, slot * SLOT, slot * SLOT + SLOT);
      const other = this.otherIds.get(slot);
      if (other !== undefined) {
        this.otherIds.set(gap, other);
        this.otherIds.delete(slot);
      }
      gap = slot;
    }
    slots.fill(0, gap * SLOT, gap * SLOT + SLOT);
    this.size -= 1;
    return true;
  }

  /** The key's slot, or -(free slot + 1) where it would go. */
  private find(key: Buffer): number {
    return this.findWords(
      nonZero(key.readUInt32LE(0)),
      key.readUInt32LE(4),
      key.readUInt32LE(8),
      key.readUInt32LE(12),
    );
  }

  private findWords(k0: number, k1: number, k2: number, k3: number): number {
    const mask = this.capacity - 1;
    const slots = this.slots;
    for (let slot = homeSlot(k0, k1, k2, k3, mask); ; slot = (slot + 1) & mask) {
      const at = slot * SLOT;
      const s0 = slots[at];
      if (s0 === 0) return -slot - 1;
      if (s0 === k0 && slots[at + 1] === k1 && slots[at + 2] === k2 && slots[at + 3] === k3) {
        return slot;
      }
    }
  }

  /**
   * The longest distance of a key from its home slot: what a lookup may probe at worst. Keys that hash badly
   * (regular ones, mixed poorly) show here as long runs, long before they show as time.
   */
  longestProbe(): number {
    const mask = this.capacity - 1;
    let longest = 0;
    for (let slot = 0; slot < this.capacity; slot++) {
      if (this.slots[slot * SLOT] === 0) continue;
      longest = Math.max(longest, (slot - this.home(slot)) & mask);
    }
    return longest;
  }

  /** Where the key held in `slot` would go in an empty table. */
  private home(slot: number): number {
    const at = slot * SLOT;
    const k = this.slots;
    return homeSlot(
      k[at] as number,
      k[at + 1] as number,
      k[at + 2] as number,
      k[at + 3] as number,
      this.capacity - 1,
    );
  }

  private put(slot: number, key: Buffer, id: string, tag: number): void {
    const at = slot * SLOT;
    this.words(key, this.slots, at);
    this.slots[at + TAG_WORD] = tag;
    if (!writeUuid(this.view, id, (at + ID_WORD) * 4)) this.otherIds.set(slot, id);
  }

  /**
   * Doubles the table, moving each slot's nine words as they are, in place (no array or view per key: a grow
   * moves every key at once, a stall for every answer behind it).
   */
  private grow(): void {
    const old = this.slots;
    const oldCapacity = this.capacity;
    const oldOthers = this.otherIds;
    this.capacity *= 2;
    this.slots = new Uint32Array(this.capacity * SLOT);
    this.view = Buffer.from(this.slots.buffer);
    this.otherIds = new Map();
    for (let slot = 0; slot < oldCapacity; slot++) {
      const from = slot * SLOT;
      const k0 = old[from] as number;
      if (k0 === 0) continue;
      const to =
        -this.findWords(k0, old[from + 1] as number, old[from + 2] as number, old[from + 3] as number) - 1;
      for (let w = 0; w < SLOT; w++) this.slots[to * SLOT + w] = old[from + w] as number;
      if (oldOthers.size > 0) {
        const other = oldOthers.get(slot);
        if (other !== undefined) this.otherIds.set(to, other);
      }
    }
  }
}

function homeSlot(k0: number, k1: number, k2: number, k3: number, mask: number): number {
  // Keys are hashes, but a caller's own keys need not be random: mix all four words.
  let h = Math.imul(k0 ^ Math.imul(k1, 0x9e3779b1), 0x85ebca6b);
  h = Math.imul(h ^ k2 ^ (h >>> 15), 0xc2b2ae35);
  h = Math.imul(h ^ k3 ^ (h >>> 13), 0x27d4eb2d);
  return (h ^ (h >>> 16)) & mask;
}

/** 0 marks a free slot: a key whose first word is 0 is stored as 1 (one bit of 128 lost, harmlessly). */
function nonZero(word: number): number {
  return word === 0 ? 1 : word;
}

/** Writes a lower-case UUID's 16 bytes at `offset`; false (nothing usable written) for any other text. */
function writeUuid(view: Buffer, id: string, offset: number): boolean {
  if (id.length !== 36) return false;
  let at = offset;
  for (let i = 0; i < 36; i += 2) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (id.charCodeAt(i) !== 0x2d) return false;
      i -= 1; // the dash takes one character: the next pair starts right after it
      continue;
    }
    const hi = lowerHex(id.charCodeAt(i));
    const lo = lowerHex(id.charCodeAt(i + 1));
    if (hi < 0 || lo < 0) return false;
    view[at++] = (hi << 4) | lo;
  }
  return true;
}

/** A lower-case hex digit's value, or -1. */
function lowerHex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

function formatUuid(view: Buffer, offset: number): string {
  const hex = view.toString('hex', offset, offset + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
