// Each stored record counts once toward a rule, however often the engine reads it: when this collector takes the
// lease again (NATS) and reads the rules' windows afresh, when a batch is handed over again after a failed write,
// when the cursor hands over records the window read at start also read. And none is skipped: a record stored
// after that read with an older id than the newest it read counts. Nor is a count lost to a reload that changes
// no rule. A rule of two records within the hour is met by two records about an address, never by one read twice.
// The real files store; a marker record (a rule of its own, blocking at once) says when the engine has decided
// what was appended with it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StoredRecord } from '../../src/records/stored-record.js';
import type { DecisionsStore } from '../../src/store/decisions.js';
import { engineStore } from '../helpers/decisions.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const GUARD_MS = 30_000;
const RULES = {
  pair: { minCriticality: 3, minRecords: 2, within: '1h', duration: '1h' },
  marker: { minCriticality: 4, threat: 'marker', duration: '1h' },
};
/** The address the pair rule is asked about, and the unit a block of it names. */
const X = '192.0.2.10';
const X_UNIT = `${X}/32`;

const probe = (fields: Partial<StoredRecord> = {}) =>
  record({ src_ip: X, criticality: 3, threat: 'probe', ...fields });
const marker = (n: number) => record({ src_ip: `198.51.100.${n}`, criticality: 4, threat: 'marker' });

async function pairEngine(t: test.TestContext) {
  const setup = await engineStore(t, { 'blocklist.rules': RULES });
  const rebuilds = () =>
    setup.lines.filter((l) => l.msg === "the rules' windows read again from the stored records").length;
  return {
    ...setup,
    rebuilds,
    /** Appends `records` and a marker after them, then waits until the marker is blocked. */
    async decided(records: StoredRecord[], n: number) {
      await setup.log.append([...records, marker(n)]);
      await until(() => setup.blocked().includes(`198.51.100.${n}/32`), GUARD_MS, `marker ${n} blocked`);
    },
  };
}

test('a collector that loses the lease and takes it again counts the window afresh, not on top of what it had counted', async (t) => {
  const engine = await pairEngine(t);
  let lose = false;
  const decisions: DecisionsStore = {
    ...engine.store.decisions,
    async lease(name, holder, ttlMs) {
      // One renewal that failed (a timeout reads as another collector holding it): the engine steps down.
      if (lose) {
        lose = false;
        return false;
      }
      return engine.store.decisions.lease(name, holder, ttlMs);
    },
  };
  engine.startEngine({ decisions, lease: { holder: 'this', ttlMs: 15_000 } });
  await until(() => engine.rebuilds() === 1, GUARD_MS, 'the engine started');
  await engine.decided([probe()], 1);
  lose = true;
  await until(() => engine.rebuilds() === 2, GUARD_MS, 'the lease taken again, the window read again');
  await engine.decided([], 2);
  assert.equal(engine.blocked().includes(X_UNIT), false, 'one record about X made no block of two');
});

test('a batch handed over again after a failed write counts once, and is decided again', async (t) => {
  const engine = await pairEngine(t);
  let failNext = false;
  const decisions: DecisionsStore = {
    ...engine.store.decisions,
    async apply(changes) {
      // The store unreachable for this one write (a NATS election, a full disk): the batch is read again.
      if (failNext) {
        failNext = false;
        throw new Error('the decisions cannot be written now');
      }
      return engine.store.decisions.apply(changes);
    },
  };
  engine.startEngine({ decisions });
  await until(() => engine.rebuilds() === 1, GUARD_MS, 'the engine started');
  failNext = true;
  await engine.decided([probe()], 1);
  assert.ok(
    engine.lines.some((l) => l.msg === 'the decisions engine failed; reading the batch again in 1 s'),
    'the first write failed',
  );
  assert.equal(engine.blocked().includes(X_UNIT), false, 'one record about X made no block of two');
  // A second record about X does.
  await engine.decided([probe()], 2);
  assert.equal(engine.blocked().includes(X_UNIT), true);
});

test('a record stored after the engine read the window, with an older id than the newest it read, counts', async (t) => {
  const { log, blocked, lines, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '1h' } },
  });
  // A's id is made first (another worker, a node whose clock is behind, a syslog sender's retry) and stored last.
  const a = record({ src_ip: X, criticality: 4, received_at: new Date(Date.now() - 1000).toISOString() });
  const b = record({ src_ip: '198.51.100.1', criticality: 1 });
  assert.ok(a.id < b.id);
  await log.append([b]);
  startEngine();
  await until(
    () =>
      lines.some((l) => l.msg === "the rules' windows read again from the stored records" && l.records === 1),
    GUARD_MS,
    'the engine read B with the window',
  );
  const after = record({ src_ip: '198.51.100.2', criticality: 4 });
  await log.append([a, after]);
  await until(() => blocked().includes('198.51.100.2/32'), GUARD_MS, 'the record after A decided');
  assert.equal(blocked().includes(X_UNIT), true);
});

test('a record the window read at start and the cursor then hands over counts once', async (t) => {
  const engine = await pairEngine(t);
  const first = engine.startEngine();
  await until(() => engine.rebuilds() === 1, GUARD_MS, 'the first engine started (its cursor made)');
  await first.stop();
  // Stored while no engine ran: after the cursor, and in the window read at the next start.
  await engine.log.append([probe()]);
  engine.startEngine();
  await until(() => engine.rebuilds() === 2, GUARD_MS, 'the second engine started');
  await engine.decided([], 1);
  assert.equal(engine.blocked().includes(X_UNIT), false, 'one record about X made no block of two');
});

test('a reload that changes no rule keeps the counts; one that changes a rule starts them again', async (t) => {
  const engine = await pairEngine(t);
  const running = engine.startEngine();
  await until(() => engine.rebuilds() === 1, GUARD_MS, 'the engine started');
  await engine.decided([probe()], 1);
  // An allow entry added, blocks capped lower: what is counted is the same.
  running.configure({ ...engine.config.blocklist, allow: ['203.0.113.0/24'], maxBlocks: 1000 });
  await engine.decided([probe()], 2);
  assert.equal(engine.blocked().includes(X_UNIT), true, 'the second record about X met the rule');

  const Y = '192.0.2.20';
  await engine.decided([probe({ src_ip: Y })], 3);
  // The pair rule's window made shorter: counting starts again under it.
  const loaded = engine.config.blocklist.rules;
  const rules = { ...loaded, pair: { ...(loaded.pair as (typeof loaded)[string]), within: '30m' } };
  running.configure({ ...engine.config.blocklist, rules });
  await engine.decided([probe({ src_ip: Y })], 4);
  assert.equal(engine.blocked().includes(`${Y}/32`), false, 'one record about Y under the new rule');
});
