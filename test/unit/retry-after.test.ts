// Retry-After as the HTTP receivers read it: delay-seconds or an HTTP date, anything else ignored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRetryAfter } from '../../src/outputs/receivers/http-post.js';

test('Retry-After: seconds, an HTTP date (relative to now, never negative), or nothing', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  assert.equal(parseRetryAfter('120', now), 120_000);
  assert.equal(parseRetryAfter([' 5 '], now), 5000);
  assert.equal(parseRetryAfter('Thu, 26 Nov 2026 12:00:30 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Thu, 26 Nov 2026 11:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter('soon', now), null);
  assert.equal(parseRetryAfter('', now), null);
  assert.equal(parseRetryAfter(undefined, now), null);
});
