// What makes grouped alerts at-least-once across a crash is the order of three writes (outputs/grouping.ts): the
// open groups are written before the output's position moves past a batch, and a summary's group is started
// afresh (and written) only after the summary was delivered. A kill -9 lands at either point only by chance, so
// this checks the order itself, at the moments a kill would matter: the real forwarder, a real files store, a
// real HTTPS receiver; the store's feed is wrapped so that each ack first reads the state file as a crash there
// would leave it, and the receiver reads it as each summary arrives.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { startForwarder } from '../../src/outputs/forwarder.js';
import { groupStatePath } from '../../src/outputs/grouping.js';
import { openStore } from '../../src/store/open-store.js';
import type { OutputCursors, OutputFeed } from '../../src/store/store.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { record } from '../store/contract.js';

interface GroupState {
  groups: { key: string; count: number }[];
  /** Ids counted and not yet acked, with when. */
  pending: [string, number][];
}

test('grouped output: the open groups are written before each ack, and a group restarts only after its summary was delivered', async (t) => {
  const dataDir = makeTempDir(t);
  const state = groupStatePath(dataDir, 'hook');
  const read = (): GroupState | null =>
    existsSync(state) ? (JSON.parse(readFileSync(state, 'utf8')) as GroupState) : null;

  // At each summary's arrival: the count its group holds on disk then (a crash now must send it again).
  const atSummary: { count: number; onDisk: number | undefined }[] = [];
  let firsts = 0;
  const receiver = await startHttpsReceiver(t, (_request, body, response) => {
    const message = JSON.parse(body) as { group?: unknown; count?: number; records?: unknown[] };
    if ('group' in message) {
      const key = JSON.stringify([(message.group as { src_ip: string }).src_ip]);
      const onDisk = read()?.groups.find((g) => g.key === key)?.count;
      atSummary.push({ count: message.count as number, onDisk });
    } else firsts += message.records?.length ?? 0;
    response.writeHead(200).end();
  });
  const ca = join(dataDir, 'ca.pem');
  writeFileSync(ca, receiver.ca);
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent',
    overrides: {
      dataDir,
      outputs: {
        hook: {
          type: 'webhook',
          url: `${receiver.url}/json`,
          ca,
          group: { by: ['src_ip'], window: '1s' },
          batch: { maxWaitMs: 50, maxRecords: 20 },
        },
      },
    },
  });
  const logger = pino({ level: 'silent' });
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  const log = await store.openRecordLog();
  t.after(() => log.close());

  // At each ack: whether the state file already names every record of the batch as counted.
  const acks: { records: number; counted: boolean }[] = [];
  const cursors: OutputCursors = {
    list: () => store.outputs.list(),
    replay: (name, since) => store.outputs.replay(name, since),
    forget: (name) => store.outputs.forget(name),
    async openFeed(options) {
      const feed = await store.outputs.openFeed(options);
      const wrapped: OutputFeed = {
        close: () => feed.close(),
        async next(next) {
          const batch = await feed.next(next);
          return {
            records: batch.records,
            ack() {
              const absorbed = new Set((read()?.pending ?? []).map(([id]) => id));
              acks.push({
                records: batch.records.length,
                counted: batch.records.every((line) => absorbed.has(line.id)),
              });
              return batch.ack();
            },
          };
        },
      };
      return wrapped;
    },
  };
  const output = config.outputs.hook;
  assert.ok(output);
  const forwarder = startForwarder({
    name: 'hook',
    output,
    cursors,
    dataDir,
    owner: null,
    logger,
    env: {},
    now: Date.now,
  });
  t.after(() => forwarder.stop());
  await forwarder.started;

  // Two windows of one group, in several batches each.
  for (let i = 0; i < 6; i++) {
    await log.append(Array.from({ length: 15 }, () => record({ src_ip: '203.0.113.5' })));
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await until(
    () => firsts + atSummary.reduce((n, s) => n + s.count, 0) >= 90,
    30_000,
    'every count delivered',
  );
  assert.ok(acks.length >= 3, `${acks.length} batches`);
  assert.deepEqual(
    acks.filter((a) => !a.counted),
    [],
    'every batch counted in the state file before its ack',
  );
  assert.ok(atSummary.length >= 2, `${atSummary.length} summaries`);
  for (const s of atSummary)
    assert.equal(s.onDisk, s.count, 'the group still holds its count on disk while its summary is sent');
  assert.equal(firsts + atSummary.reduce((n, s) => n + s.count, 0), 90);
});
