// Blocklists on the NATS backend: two collectors on one real nats-server share blocks, allow entries and
// feeds through the KV bucket; each engine counts every record (a rule over two sensors is met by records that
// reached different collectors); a block made by hand through one is served by the other within a second.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load-config.js';
import { startFeedService } from '../../src/decisions/feed-service.js';
import { hashKey } from '../../src/keys.js';
import type { DecisionChange } from '../../src/store/decisions.js';
import { createNatsDecisions } from '../../src/store/nats/nats-decisions.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { post } from '../helpers/client.js';
import { blockChange, feedAuthorization, feedChange } from '../helpers/decisions.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { genericRecord } from '../helpers/records.js';
import { until } from '../helpers/until.js';

const GUARD_MS = 20_000;

async function feedText(server: TestServer): Promise<string | null> {
  const res = await request(`${server.url}/feeds/edge`, {
    headers: { authorization: `Basic ${Buffer.from('edge:secret-password-n').toString('base64')}` },
    dispatcher: server.agent,
  });
  const text = await res.body.text();
  return res.statusCode === 200 ? text : null;
}

test('nats: two collectors serve the same feed; a rule over two sensors counts records that reached either', async (t) => {
  const node = await startNatsServer(t);
  const overrides = {
    'store.backend': 'nats',
    'nats.servers': [node.url],
    'nats.publishTimeoutMs': 1500,
    'blocklist.rules': {
      critical: { minCriticality: 4, duration: '24h' },
      spreading: { minCriticality: 2, minSensors: 2, within: '1h', duration: '6h' },
    },
  };
  const a = await startTestServer(t, { overrides });
  const b = await startTestServer(t, { overrides });
  const store: Store = await openStore(a.loaded.config, {
    dataDir: a.dataDir,
    logger: pino({ level: 'silent' }),
  });
  t.after(() => store.close());
  const key1 = (await store.registry.add({ name: 'fw1', timezone: null })).key;
  const key2 = (await store.registry.add({ name: 'fw2', timezone: null })).key;
  const apply = (changes: DecisionChange[]) => store.decisions.apply(changes);
  await apply([
    {
      kind: 'feed',
      key: 'edge',
      value: {
        name: 'edge',
        format: 'plain',
        passwordHash: hashKey('secret-password-n'),
        maxEntries: null,
        family: 'any',
        createdAt: new Date().toISOString(),
        rotatedAt: null,
      },
    },
  ]);
  await until(
    async () => (await feedText(a)) === '' && (await feedText(b)) === '',
    GUARD_MS,
    'the feed on both',
  );
  const send = async (server: TestServer, sensor: string, key: string, fields: Record<string, unknown>) => {
    await until(
      async () =>
        (await post(server.url, '/generic', [genericRecord(fields)], { sensor, key, agent: server.agent }))
          .status === 200,
      GUARD_MS,
      `a record stored through ${sensor}`,
    );
  };
  await send(a, 'fw1', key1, { source_ip: '198.51.100.40', criticality: 4 });
  const ms = await until(
    async () => (await feedText(b)) === '198.51.100.40\n',
    GUARD_MS,
    'the block on the other collector',
    10,
  );
  t.diagnostic(`a block made through one collector served by the other ${ms} ms after the 200`);
  await send(a, 'fw1', key1, { source_ip: '192.0.2.70', criticality: 2 });
  await send(b, 'fw2', key2, { source_ip: '192.0.2.70', criticality: 2 });
  await until(
    async () => (await feedText(a))?.includes('192.0.2.70') === true,
    GUARD_MS,
    'the two-sensor block',
  );
  await until(
    async () => (await feedText(b))?.includes('192.0.2.70') === true,
    GUARD_MS,
    'the two-sensor block on b',
  );
  const now = new Date();
  await apply([
    {
      kind: 'block',
      key: '203.0.113.66/32',
      value: {
        address: '203.0.113.66/32',
        rule: 'manual',
        reason: 'by hand',
        since: now.toISOString(),
        until: new Date(now.getTime() + 3_600_000).toISOString(),
        criticality: 4,
        records: 0,
        sensors: [],
        who: 'test',
      },
    },
  ]);
  const manual = await until(
    async () => (await feedText(a))?.includes('203.0.113.66') === true,
    GUARD_MS,
    'the manual block',
    10,
  );
  t.diagnostic(`a manual block served ${manual} ms after it was written`);
  assert.equal(await feedText(b), '192.0.2.70\n198.51.100.40\n203.0.113.66\n');
});

test('nats: one engine per cluster; when its collector stops, another takes over and blocks what it missed', async (t) => {
  const node = await startNatsServer(t);
  const overrides = {
    'store.backend': 'nats',
    'nats.servers': [node.url],
    'nats.publishTimeoutMs': 1500,
    'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
  };
  const a = await startTestServer(t, { overrides });
  await until(
    () => a.logs.some((l) => l.msg === 'this collector runs the decisions engine now'),
    GUARD_MS,
    'a leads',
  );
  const b = await startTestServer(t, { overrides });
  const store: Store = await openStore(a.loaded.config, {
    dataDir: a.dataDir,
    logger: pino({ level: 'silent' }),
  });
  t.after(() => store.close());
  const key = (await store.registry.add({ name: 'fw1', timezone: null })).key;
  const send = async (server: TestServer, address: string) => {
    const record = [genericRecord({ source_ip: address, criticality: 4 })];
    await until(
      async () =>
        (await post(server.url, '/generic', record, { sensor: 'fw1', key, agent: server.agent })).status ===
        200,
      GUARD_MS,
      `a record about ${address} stored`,
    );
  };
  const blocked = async (address: string) => (await store.decisions.read()).blocks.has(`${address}/32`);
  await send(b, '198.51.100.50');
  await until(() => blocked('198.51.100.50'), GUARD_MS, 'the block made by the leader');
  // The log line follows the write, through serve's stdout: wait for it rather than race it.
  await until(() => a.logs.some((l) => l.msg === 'address blocked'), GUARD_MS, "the leader's log line");
  assert.equal(a.logs.filter((l) => l.msg === 'address blocked').length, 1);
  // The leader stops; a record stored meanwhile is blocked by the next one, once the lease runs out.
  assert.equal(await a.stop(), 0);
  await send(b, '198.51.100.51');
  const ms = await until(() => blocked('198.51.100.51'), 60_000, 'the block made after the take-over');
  t.diagnostic(`blocked by the next leader ${ms} ms after the record`);
  assert.ok(b.logs.some((l) => l.msg === 'this collector runs the decisions engine now'));
  // b blocked only what it saw after it took over: the first address was the leader's alone.
  await until(() => b.logs.some((l) => l.msg === 'address blocked'), GUARD_MS, "the next leader's log line");
  const byB = b.logs.filter((l) => l.msg === 'address blocked').map((l) => JSON.stringify(l));
  assert.equal(byB.length, 1, byB.join('\n'));
  assert.match(byB[0] ?? '', /198\.51\.100\.51/);
});

test('nats: a full re-read of the decisions that finds nothing new renders no feed again', async (t) => {
  const node = await startNatsServer(t);
  const nc = await connect({ servers: node.url });
  t.after(() => nc.close());
  /** Full reads of the bucket (each asks its status first). */
  let reads = 0;
  const counted = (kv: KV): KV =>
    new Proxy(kv, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        if (prop === 'status') reads++;
        return value.bind(target);
      },
    });
  const decisions = createNatsDecisions({
    name: 'renders',
    open: async (timeout) =>
      counted(await new Kvm(jetstream(nc, { timeout })).create('renders', { history: 1 })),
    waitMs: 5000,
    rereadIntervalMs: 100,
  });
  const now = Date.now();
  await decisions.apply([
    feedChange('edge', 'secret-password-n'),
    blockChange('192.0.2.7/32', now, now + 3_600_000),
  ]);
  const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent' });
  const feeds = startFeedService({
    decisions,
    blocklist: config.blocklist,
    logger: pino({ level: 'silent' }),
  });
  t.after(() => feeds.stop());
  // The feed's requests, on a plain HTTP listener of the test's.
  const server = createServer((req, res) => feeds.handle(req, res, 'edge'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const fetch = async () => {
    const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/feeds/edge`, {
      headers: { authorization: feedAuthorization('edge', 'secret-password-n') },
    });
    return { status: res.statusCode, body: await res.body.text() };
  };
  const renders = () => feeds.report().feeds.find((f) => f.feed === 'edge')?.renders ?? 0;
  await until(async () => (await fetch()).body === '192.0.2.7\n', GUARD_MS, 'the feed served');
  assert.equal(renders(), 1);
  // Re-reads every 100 ms deliver the same entries, read anew: neither a poll nor a scrape renders it again.
  const before = reads;
  await until(() => reads >= before + 5, GUARD_MS, 'five full re-reads');
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(await fetch(), { status: 200, body: '192.0.2.7\n' });
    feeds.report();
    await new Promise((resolve) => setTimeout(resolve, 120));
  }
  assert.equal(renders(), 1);
});
