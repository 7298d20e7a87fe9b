// Sensor keys: generation (32 random bytes, base64url, recognisable prefix), hashing and constant-time checking.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'tck_';
/** Longest header value worth hashing; anything longer cannot be a key. */
export const MAX_KEY_LENGTH = 256;

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Stored form of a key: `sha256:<hex>`. Keys carry 256 random bits, so a fast unsalted hash is enough. */
export function hashKey(key: string): string {
  return `sha256:${hash('sha256', key, 'hex')}`;
}

export function keyDigest(key: string): Buffer {
  // One-shot hash: about half the cost of createHash().update().digest() for a short key, on every request.
  return hash('sha256', key, 'buffer');
}

/** Decodes a stored hash to its 32 digest bytes (null when the stored form is unknown). */
export function digestFromHash(hash: string): Buffer | null {
  if (!/^sha256:[0-9a-f]{64}$/.test(hash)) return null;
  return Buffer.from(hash.slice(7), 'hex');
}

/** Constant-time comparison of two 32-byte digests. */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
