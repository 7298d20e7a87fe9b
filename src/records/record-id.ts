// Record ids: UUIDv7 (RFC 9562), time-ordered and unique, made from a pooled random buffer (no syscall per id).
import { randomFillSync } from 'node:crypto';

const pool = new Uint8Array(8192);
let used = pool.length;
let lastMs = -1;
/** rand_a as a 12-bit counter within one millisecond (RFC 9562 6.2, method 1), seeded at random below 2048. */
let counter = 0;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++] as number;
}

/** The id's text is written here and read out as one flat string (see newRecordId). */
const text = Buffer.alloc(36, 0x2d); // '-' stays at 8, 13, 18, 23
const DIGITS = Buffer.from('0123456789abcdef');
/** The millisecond whose digits `text` holds. */
let writtenMs = -1;

/**
 * A new UUIDv7; ids made by one process sort in the order they were made, even if the clock steps back.
 * The text is written into a buffer and read out once: a template literal made each id a tree of ~15
 * concatenation and slice strings (~400 bytes of heap instead of 56), which every waiting request's answer kept
 * alive, so the young-generation GC copied megabytes of them under batched load.
 */
export function newRecordId(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = ((randomByte() << 8) | randomByte()) & 0x7ff;
  } else if (++counter > 0xfff) {
    // 4096 ids in one millisecond: borrow the next millisecond rather than repeat or go backwards.
    lastMs += 1;
    counter = 0;
  }
  // unix_ts_ms: 48 bits as 12 hex digits (positions 0-7 and 9-12), rewritten only when the millisecond changes.
  if (lastMs !== writtenMs) {
    writtenMs = lastMs;
    let ms = lastMs;
    for (let i = 12; i >= 0; i--) {
      if (i === 8) continue; // the dash
      text[i] = DIGITS[ms % 16] as number;
      ms = Math.floor(ms / 16);
    }
  }
  // version 7, then the 12-bit counter (rand_a).
  text[14] = 0x37;
  text[15] = DIGITS[(counter >> 8) & 15] as number;
  text[16] = DIGITS[(counter >> 4) & 15] as number;
  text[17] = DIGITS[counter & 15] as number;
  // variant 10, then 62 random bits.
  hexByte(19, 0x80 | (randomByte() & 0x3f));
  hexByte(21, randomByte());
  for (let i = 0; i < 6; i++) hexByte(24 + 2 * i, randomByte());
  return text.toString('latin1', 0, 36);
}

function hexByte(at: number, byte: number): void {
  text[at] = DIGITS[byte >> 4] as number;
  text[at + 1] = DIGITS[byte & 15] as number;
}
