// A rule's history (decisions/rule-history.ts) when rules come and go: a rule added by a reload starts afresh
// though an earlier rule of its name left an entry in the store (`check` waits 7 days before it warns about a
// rule), a restart keeps a rule's history, and the engine's clean-up removes the history of a rule no longer
// configured.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRules } from '../../src/check/rule-checks.js';
import type { BlocklistConfig } from '../../src/config/blocklist-schema.js';
import { RuleHistory } from '../../src/decisions/rule-history.js';
import { type DecisionsState, emptyDecisions } from '../../src/store/decisions.js';
import { engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-29T12:00:00Z');
const BLOCKLIST = {
  rules: { spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' } },
  maxDuration: '30d',
  maxBlocks: 250_000,
} as unknown as BlocklistConfig;

/** A store whose `spreading` entry an earlier rule of that name left: it last blocked 40 days ago. */
function stale(): DecisionsState {
  const state = emptyDecisions();
  state.rules.set('spreading', {
    rule: 'spreading',
    since: new Date(NOW - 90 * DAY).toISOString(),
    lastMatch: new Date(NOW - 40 * DAY).toISOString(),
    lastBlock: new Date(NOW - 40 * DAY).toISOString(),
  });
  return state;
}

/** `history`'s entries written into `state`, as the engine's write does. */
function write(history: RuleHistory, state: DecisionsState, now: number): void {
  for (const change of history.due(state.rules, now))
    if (change.kind === 'rule' && change.value) state.rules.set(change.key, change.value);
}

test('a rule added by a reload starts its history afresh; one the engine had before a restart keeps it', () => {
  // Added an hour ago by a reload; one record met its criteria since.
  const added = stale();
  const fresh = new RuleHistory(['spreading'], new Set(['spreading']), NOW - 3_600_000);
  fresh.match(0, NOW - 3_600_000);
  write(fresh, added, NOW - 3_600_000);
  assert.equal(added.rules.get('spreading')?.since, new Date(NOW - 3_600_000).toISOString());
  assert.equal(added.rules.get('spreading')?.lastBlock, null);
  assert.equal(checkRules(added, BLOCKLIST, NOW)?.status, 'ok');
  // Written again a minute later (its stored entry now its own): kept.
  fresh.match(0, NOW);
  write(fresh, added, NOW);
  assert.equal(added.rules.get('spreading')?.since, new Date(NOW - 3_600_000).toISOString());

  // The same rule across a restart (a new engine, not a reload that added it): its history goes on, and check
  // warns, as it should (matched lately, blocked nothing for 40 days).
  const restarted = stale();
  const again = new RuleHistory(['spreading']);
  again.match(0, NOW - 3_600_000);
  write(again, restarted, NOW - 3_600_000);
  assert.equal(restarted.rules.get('spreading')?.since, new Date(NOW - 90 * DAY).toISOString());
  assert.equal(checkRules(restarted, BLOCKLIST, NOW)?.status, 'warn');
});

test('a collector that takes the engine over days after the reload that added a rule keeps what the one before it wrote of it', () => {
  // Reloaded 5 days ago on both collectors; the one running the engine wrote the rule's entry then, and a block 2
  // days later. The other writes nothing until it takes over (it never ran the engine meanwhile).
  const state = stale();
  const reloaded = NOW - 5 * DAY;
  const leader = new RuleHistory(['spreading'], new Set(['spreading']), reloaded);
  leader.match(0, reloaded + 1000);
  write(leader, state, reloaded + 1000);
  leader.block('spreading', NOW - 3 * DAY);
  write(leader, state, NOW - 3 * DAY);
  // Its clock a few seconds ahead of the leader's: the leader's entry starts before its reload.
  const standby = new RuleHistory(['spreading'], new Set(['spreading']), reloaded + 5000);
  standby.match(0, NOW);
  write(standby, state, NOW);
  assert.equal(state.rules.get('spreading')?.since, new Date(reloaded + 1000).toISOString());
  assert.equal(state.rules.get('spreading')?.lastBlock, new Date(NOW - 3 * DAY).toISOString());
});

test("the engine's clean-up removes the history of a rule no longer configured", async (t) => {
  const { store, log, blocked, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '1h' } },
  });
  await store.decisions.apply([
    {
      kind: 'rule',
      key: 'gone',
      value: {
        rule: 'gone',
        since: new Date(Date.now() - 9 * DAY).toISOString(),
        lastMatch: null,
        lastBlock: null,
      },
    },
  ]);
  let offset = 0;
  startEngine({ now: () => Date.now() + offset });
  const critical = (address: string) =>
    record({ src_ip: address, criticality: 4, received_at: new Date(Date.now() + offset).toISOString() });
  await log.append([critical('203.0.113.1')]);
  await until(() => blocked().includes('203.0.113.1/32'), 30_000, 'a first batch');
  // Past the clean-up's minute: the next batch is followed by the clean-up.
  offset = 90_000;
  await log.append([critical('203.0.113.2')]);
  await until(async () => !(await store.decisions.read()).rules.has('gone'), 30_000, 'the entry removed');
  assert.ok((await store.decisions.read()).rules.has('critical'), "the configured rule's history stays");
});
