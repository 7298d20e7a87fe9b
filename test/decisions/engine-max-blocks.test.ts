// blocklist.maxBlocks: a flood of records from ever new sources (spoofed, or a sensor's mistake) makes blocks up to
// the bound and no further (each one counted and said in the log), blocks held are still extended, and new ones
// are made again once blocks end, before the clean-up has removed them; the offences (an address's blocks of the
// last 30 days) are kept to twice the bound, the oldest forgotten first and those of blocks in force never. Both
// backends (NATS: a block written is counted against the bound until its watcher shows it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineStore } from '../helpers/decisions.js';
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
    assert.equal(warned.notBlocked, 3);
    assert.equal(warned.maxBlocks, 3);

    // Ten minutes on, still full: a held block is extended by its next record, a new address is refused.
    const before = Date.parse((await store.decisions.read()).blocks.get('203.0.113.1/32')?.until ?? '');
    offset = 10 * 60_000;
    await log.append([
      record({
        src_ip: '203.0.113.1',
        criticality: 4,
        received_at: new Date(Date.now() + offset).toISOString(),
      }),
      record({
        src_ip: '203.0.113.8',
        criticality: 4,
        received_at: new Date(Date.now() + offset).toISOString(),
      }),
    ]);
    await until(
      async () =>
        engine.counts().skippedFull === 4 &&
        Date.parse((await store.decisions.read()).blocks.get('203.0.113.1/32')?.until ?? '') >
          before + 9 * 60_000,
      30_000,
      'the held block extended and the new address refused',
    );

    // 75 minutes on, the blocks have ended, the extended one too (still stored: the clean-up runs after the
    // batch): an address blocked before and a new one are both blocked.
    offset = 75 * 60_000;
    await log.append([
      record({
        src_ip: '203.0.113.1',
        criticality: 4,
        received_at: new Date(Date.now() + offset).toISOString(),
      }),
      record({
        src_ip: '203.0.113.7',
        criticality: 4,
        received_at: new Date(Date.now() + offset).toISOString(),
      }),
    ]);
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
    assert.equal(engine.counts().skippedFull, 4);

    // The clean-ups (each a minute apart, after a batch): 14 offences in all (10 old, 4 of the rules' blocks)
    // against a bound of 6. Those of blocks in force stay; of the others, the oldest go. Two minutes on, a record
    // no rule matches makes one more batch, so a clean-up runs after the last block was written.
    offset = 77 * 60_000;
    await log.append([
      record({
        src_ip: '203.0.113.9',
        criticality: 0,
        received_at: new Date(Date.now() + offset).toISOString(),
      }),
    ]);
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
