// Record ids: UUIDv7 (RFC 9562), time-ordered and unique, made from a pooled random buffer (no syscall per id).
import { randomFillSync } from 'node:crypto';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const pool = new Uint8Array(8192);
let used = pool.length;
let lastMs = -1;
let msHex = '';
/** rand_a as a 12-bit counter within one millisecond (RFC 9562 6.2, method 1), seeded at random below 2048. */
let counter = 0;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++] as number;
}

/** A new UUIDv7; ids made by one process sort in the order they were made, even if the clock steps back. */
export function newRecordId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = ((randomByte() << 8) | randomByte()) & 0x7ff;
    msHex = lastMs.toString(16).padStart(12, '0');
  } else if (++counter > 0xfff) {
    // 4096 ids in one millisecond: borrow the next millisecond rather than repeat or go backwards.
    lastMs += 1;
    counter = 0;
    msHex = lastMs.toString(16).padStart(12, '0');
  }
  let tail = '';
  for (let i = 0; i < 6; i++) tail += HEX[randomByte()];
  const c = counter.toString(16).padStart(3, '0');
  return `${msHex.slice(0, 8)}-${msHex.slice(8)}-7${c}-${HEX[0x80 | (randomByte() & 0x3f)]}${HEX[randomByte()]}-${tail}`;
}
