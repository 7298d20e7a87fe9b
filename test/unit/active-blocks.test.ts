// The count of blocks in force (`threatcol_blocks_active`, blocklist.maxBlocks): ends in the collector's own form
// compared as text, any other form the store accepts parsed; the same count as parsing every end, and counted
// again when the first counted block ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { activeBlocks } from '../../src/decisions/engine.js';
import { applyEntry, emptyDecisions } from '../../src/store/decisions.js';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');

/** An end `ms` from NOW, in one of the forms Date.parse takes and the store's shape check accepts. */
function endText(ms: number, form: number): string {
  const d = new Date(NOW + ms);
  if (form === 0) return d.toISOString();
  if (form === 1) return d.toISOString().replace('Z', '+00:00');
  if (form === 2) return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return d.toUTCString();
}

test('blocks in force (property): counted as every end parsed would count them, in any form; again once one ends', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: -100, max: 100 }), fc.integer({ min: 0, max: 3 })), {
        maxLength: 40,
      }),
      fc.integer({ min: 0, max: 120 }),
      (ends, later) => {
        const state = emptyDecisions();
        ends.forEach(([ms, form], i) => {
          const address = `198.51.100.${i}/32`;
          applyEntry(state, 'block', address, {
            address,
            rule: 'r',
            reason: 'x',
            since: new Date(NOW - 60_000).toISOString(),
            // toUTCString keeps whole seconds: the end as the text says it.
            until: endText(ms * 1000, form),
            criticality: 4,
            records: 1,
            sensors: [],
            who: null,
          });
        });
        let at = NOW;
        const count = activeBlocks(() => at);
        count.delivered(state);
        const expected = (t: number) =>
          [...state.blocks.values()].filter((b) => Date.parse(b.until) > t).length;
        assert.equal(count.count(), expected(NOW));
        // Later, with no delivery between: the count follows the blocks that ended.
        at = NOW + later * 1000;
        assert.equal(count.count(), expected(at));
      },
    ),
    { numRuns: 300 },
  );
});

test("blocks in force: an end on a day its month lacks (2026-06-31, 2026-02-29: Date.parse takes the next month's first) counts as parsed", () => {
  for (const [until, at] of [
    ['2026-06-31T11:00:00.000Z', '2026-07-01T05:00:00.000Z'],
    ['2026-02-29T11:00:00.000Z', '2026-03-01T05:00:00.000Z'],
  ] as const) {
    const state = emptyDecisions();
    const address = '198.51.100.1/32';
    applyEntry(state, 'block', address, {
      address,
      rule: 'manual',
      reason: 'x',
      since: '2026-01-01T00:00:00.000Z',
      until,
      criticality: 4,
      records: 0,
      sensors: [],
      who: 'alice',
    });
    // After the end's text, before its time as parsed: in force, as the feeds (Date.parse) serve it.
    const count = activeBlocks(() => Date.parse(at));
    count.delivered(state);
    assert.equal(count.count(), 1, until);
  }
  // A leap year's February 29th is a day like any other.
  const state = emptyDecisions();
  applyEntry(state, 'block', '198.51.100.2/32', {
    address: '198.51.100.2/32',
    rule: 'manual',
    reason: 'x',
    since: '2028-01-01T00:00:00.000Z',
    until: '2028-02-29T11:00:00.000Z',
    criticality: 4,
    records: 0,
    sensors: [],
    who: 'alice',
  });
  const count = activeBlocks(() => Date.parse('2028-02-29T10:00:00.000Z'));
  count.delivered(state);
  assert.equal(count.count(), 1);
});
