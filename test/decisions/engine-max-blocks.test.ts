// blocklist.maxBlocks: a flood of records from ever new sources (spoofed, or a sensor's mistake) makes blocks up to
// the bound and no further (each one counted and said in the log), blocks held are still extended, and new ones
// are made again once blocks end, before the clean-up has removed them; the offences (an address's blocks of the
// last 30 days) are kept to twice the bound, the oldest forgotten first and those of blocks in force never. Both
// backends (NATS: a block written is counted against the bound until its watcher shows it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DecisionsState, DecisionsStore } from '../../src/store/decisions.js';
import { blockChange, engineStore } from '../helpers/decisions.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

const DAY = 86_400_000;

for (const backend of ['files', 'nats'] as const)
  test(`${backend}: blocklist.maxBlocks: blocks up to the bound, the rest counted and logged; new ones once blocks end; offences kept to twice the bound`, async (t) => {
    const nats =
      backend === 'nats' ? { 'store.backend': 'nats', 'nats.servers': [(await startNatsServer(t)).url] } : {};
    const { store, log, blocked, lines, startEngine } = await engineStore(t, {
      'blocklist.rules': { critical: { minCriticality: 4, duration: '1h' } },
      'blocklist.maxBlocks': 3,
      ...nats,
    });
    // Ten offences of earlier blocks, 1 to 10 days old, whose blocks have ended.
    await store.decisions.apply(
      Array.from({ length: 10 }, (_, i) => {
        const unit = `198.51.100.${i + 1}/32`;
        return {
          kind: 'offence' as const,
          key: unit,
          value: { address: unit, blocks: 1, last: new Date(Date.now() - (i + 1) * DAY).toISOString() },
        };
      }),
    );
    let offset = 0;
    /** A record about `address`, received at the engine's time (the test's clock moved on by `offset`). */
    const later = (address: string, criticality: number) =>
      record({ src_ip: address, criticality, received_at: new Date(Date.now() + offset).toISOString() });
    const engine = startEngine({ now: () => Date.now() + offset });

    await log.append(
      Array.from({ length: 6 }, (_, i) => record({ src_ip: `203.0.113.${i + 1}`, criticality: 4 })),
    );
    await until(
      () => engine.counts().skippedFull === 3 && blocked().length === 3,
      30_000,
      'three addresses blocked and three refused',
    );
    assert.deepEqual(blocked(), ['203.0.113.1/32', '203.0.113.2/32', '203.0.113.3/32']);
    const state = await store.decisions.read();
    assert.deepEqual([...state.blocks.keys()].sort(), blocked());
    const warned = lines.find((l) => l.msg?.startsWith('blocklist.maxBlocks reached'));
    assert.ok(warned, 'the refusals are logged');
    // All three, unless the engine's scan at start took some of the records and its feed the rest: then the
    // rest are said a minute later.
    assert.ok(Number(warned.refused) >= 1 && Number(warned.refused) <= 3, String(warned.refused));
    assert.equal(warned.maxBlocks, 3);

    // Ten minutes on, still full: a held block is extended by its next record; a new address is refused, and so
    // is one whose block has ended but is still stored (a new block of it would be one more in force).
    const before = Date.parse((await store.decisions.read()).blocks.get('203.0.113.1/32')?.until ?? '');
    await store.decisions.apply([
      blockChange('198.51.100.60/32', Date.now() - 60_000, Date.now() + 5 * 60_000),
    ]);
    offset = 10 * 60_000;
    await log.append([later('198.51.100.60', 4), later('203.0.113.1', 4), later('203.0.113.8', 4)]);
    await until(
      async () =>
        engine.counts().skippedFull === 5 &&
        Date.parse((await store.decisions.read()).blocks.get('203.0.113.1/32')?.until ?? '') >
          before + 9 * 60_000,
      30_000,
      'the held block extended and the new address refused',
    );

    // 75 minutes on, the blocks have ended, the extended one too (stored until a clean-up removes them): an
    // address blocked before and a new one are both blocked.
    offset = 75 * 60_000;
    await log.append([later('203.0.113.1', 4), later('203.0.113.7', 4)]);
    await until(
      () => blocked().includes('203.0.113.7/32'),
      30_000,
      'a new address blocked once blocks ended',
    );
    assert.equal(
      blocked().filter((a) => a === '203.0.113.1/32').length,
      2,
      'the first address blocked again',
    );
    assert.equal(engine.counts().skippedFull, 5);

    // The clean-ups (each a minute apart, after a batch): 14 offences in all (10 old, 4 of the rules' blocks)
    // against a bound of 6. Those of blocks in force stay; of the others, the oldest go. Two minutes on, a record
    // no rule matches makes one more batch, so a clean-up runs after the last block was written.
    offset = 77 * 60_000;
    await log.append([later('203.0.113.9', 0)]);
    await until(
      async () => (await store.decisions.read()).offences.size === 6,
      30_000,
      'the offences cut to twice the bound',
    );
    const offences = [...(await store.decisions.read()).offences.keys()].sort();
    assert.deepEqual(offences, [
      '198.51.100.1/32',
      '198.51.100.2/32',
      '203.0.113.1/32',
      '203.0.113.2/32',
      '203.0.113.3/32',
      '203.0.113.7/32',
    ]);
    assert.equal(
      (await store.decisions.read()).offences.get('203.0.113.1/32')?.blocks,
      2,
      'a repeat offender',
    );
  });

test('blocklist.maxBlocks with a watcher that shows writes late (as NATS may): a removal shown while a batch is written does not let the next batch past the bound', async (t) => {
  const { store, log, blocked, startEngine } = await engineStore(t, {
    'blocklist.rules': { critical: { minCriticality: 4, duration: '1h' } },
    'blocklist.maxBlocks': 3,
  });
  const now = Date.now();
  await store.decisions.apply([
    blockChange('192.0.2.1/32', now, now + 3_600_000),
    blockChange('192.0.2.2/32', now, now + 3_600_000),
  ]);
  // The engine's watcher shows only what the test hands it; the write of the first rule-made block takes 800 ms.
  const watcher: { show: (state: DecisionsState) => void } = { show: () => {} };
  let writing: () => void = () => {};
  const inWrite = new Promise<void>((resolve) => {
    writing = resolve;
  });
  const slow: DecisionsStore = {
    ...store.decisions,
    watch: (onState) => {
      watcher.show = onState;
      void store.decisions.read().then(onState);
      return { stop() {} };
    },
    async apply(changes) {
      if (changes.some((c) => c.kind === 'block' && c.key === '203.0.113.1/32')) {
        writing();
        await new Promise((resolve) => setTimeout(resolve, 800));
      }
      return store.decisions.apply(changes);
    },
  };
  const engine = startEngine({ decisions: slow });
  await log.append([record({ src_ip: '203.0.113.1', criticality: 4 })]);
  await inWrite;
  // `block remove` of another address, shown while that write is in flight (the engine checks it again in a
  // write of its own).
  await store.decisions.apply([
    {
      kind: 'cleared',
      key: '198.51.100.77/32',
      value: { address: '198.51.100.77/32', at: new Date().toISOString() },
    },
  ]);
  watcher.show(await store.decisions.read());
  await until(() => blocked().includes('203.0.113.1/32'), 30_000, 'the first address blocked');
  // Three blocks in force, the last not shown by the watcher yet: the next address is refused.
  await log.append([record({ src_ip: '203.0.113.2', criticality: 4 })]);
  await until(() => engine.counts().skippedFull === 1, 30_000, 'the second address refused');
  assert.deepEqual([...(await store.decisions.read()).blocks.keys()].sort(), [
    '192.0.2.1/32',
    '192.0.2.2/32',
    '203.0.113.1/32',
  ]);
});
