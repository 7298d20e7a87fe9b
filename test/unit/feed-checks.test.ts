// `check`'s feeds line: quiet while every feed was fetched within a day, a warning for one nobody fetched or
// whose last fetch was refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkFeeds } from '../../src/check/feed-checks.js';
import { emptyDecisions, type FeedEntry } from '../../src/store/decisions.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const iso = (hoursAgo: number) => new Date(NOW - hoursAgo * 3_600_000).toISOString();

function feed(name: string, createdHoursAgo: number): FeedEntry {
  return {
    name,
    format: 'plain',
    passwordHash: `sha256:${'0'.repeat(64)}`,
    maxEntries: null,
    family: 'any',
    createdAt: iso(createdHoursAgo),
    rotatedAt: null,
  };
}

test('check: feeds fetched within a day are fine; never fetched, fetched long ago or refused warn', () => {
  const state = emptyDecisions();
  assert.equal(checkFeeds(state, NOW), null);
  state.feeds.set('fresh', feed('fresh', 2));
  state.feeds.set('pulled', feed('pulled', 100));
  state.fetches.set('pulled', { feed: 'pulled', at: iso(1), address: '192.0.2.1', status: 304 });
  assert.equal(checkFeeds(state, NOW)?.status, 'ok');
  state.feeds.set('never', feed('never', 30));
  state.feeds.set('stale', feed('stale', 100));
  state.fetches.set('stale', { feed: 'stale', at: iso(25), address: '192.0.2.2', status: 200 });
  state.feeds.set('refused', feed('refused', 100));
  state.fetches.set('refused', { feed: 'refused', at: iso(1), address: '192.0.2.3', status: 401 });
  const result = checkFeeds(state, NOW);
  assert.equal(result?.status, 'warn');
  assert.match(result?.message ?? '', /feed never was never fetched/);
  assert.match(result?.message ?? '', /feed stale was last fetched .* by 192\.0\.2\.2/);
  assert.match(result?.message ?? '', /feed refused: .* refused with 401/);
  assert.doesNotMatch(result?.message ?? '', /fresh|pulled/);
});
