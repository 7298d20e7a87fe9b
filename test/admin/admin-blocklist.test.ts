// The dashboard's Blocklist panel, GET /api/blocklist, against the real admin listener of a collector whose
// store holds blocks (one made by a record posted over real TLS, others by hand), allow entries and feeds
// fetched over real TLS: the newest blocks first and bounded with their total, allow entries, each feed's last
// fetch, and which of the page's addresses are blocked (`check`, bounded too).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { request } from 'undici';
import { hashKey } from '../../src/keys.js';
import type { Block, DecisionChange } from '../../src/store/decisions.js';
import { openStore } from '../../src/store/open-store.js';
import { post } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';
import { until } from '../helpers/until.js';

const GUARD_MS = 15_000;
const SCRIPT_REASON = '<script>window.pwned = 1</script>';

async function decide(server: TestServer, changes: DecisionChange[]): Promise<void> {
  const store = await openStore(server.loaded.config, {
    dataDir: server.dataDir,
    logger: pino({ level: 'silent' }),
  });
  try {
    await store.decisions.apply(changes);
  } finally {
    await store.close();
  }
}

function manual(address: string, sinceMs: number, untilMs: number, reason = 'by hand'): DecisionChange {
  const value: Block = {
    address,
    rule: 'manual',
    reason,
    since: new Date(sinceMs).toISOString(),
    until: new Date(untilMs).toISOString(),
    criticality: 4,
    records: 0,
    sensors: [],
    who: 'alice',
  };
  return { kind: 'block', key: address, value };
}

interface Panel {
  blocks: Array<Block & { allowedBy: string | null }>;
  total: number;
  maxBlocks: number;
  maxChecked: number;
  keptOut: number;
  allow: Array<{ network: string; reason: string; until: string | null; source: string }>;
  allowTotal: number;
  feeds: Array<{
    name: string;
    format: string;
    lastFetch: { at: string; address: string; status: number } | null;
  }>;
  blocked?: Record<string, { address: string; rule: string; until: string }>;
}

async function getJson(server: TestServer, path: string): Promise<{ status: number; body: unknown }> {
  const res = await request(`${server.adminUrl}${path}`);
  return { status: res.statusCode, body: await res.body.json() };
}

test('GET /api/blocklist: newest blocks first (bounded, with the total), allow entries, feeds last fetch, marking', {
  timeout: 120_000,
}, async (t) => {
  const server = await startTestServer(t, {
    overrides: {
      'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } },
      'blocklist.allow': ['192.0.2.128/25'],
    },
  });
  const key = await server.addSensor('fw1');
  const now = Date.now();
  const changes: DecisionChange[] = [];
  // 150 older manual blocks: only the newest 100 of all are listed.
  for (let i = 0; i < 150; i++)
    changes.push(manual(`203.0.113.${i}/32`, now - 3_600_000 + i * 1000, now + 86_400_000));
  // Expired: not listed, not counted.
  changes.push(manual('203.0.113.200/32', now - 7_200_000, now - 60_000));
  // A block an allow entry keeps out of the feeds, and one with a reason that is markup.
  changes.push(manual('192.0.2.200/32', now - 1000, now + 3_600_000));
  changes.push(manual('2001:db8:5:6::/64', now - 500, now + 3_600_000, SCRIPT_REASON));
  changes.push({
    kind: 'allow',
    key: '198.18.0.0/15',
    value: {
      network: '198.18.0.0/15',
      reason: 'partner',
      since: new Date().toISOString(),
      until: null,
      who: 'bob',
    },
  });
  changes.push({
    kind: 'feed',
    key: 'edge',
    value: {
      name: 'edge',
      format: 'plain',
      passwordHash: hashKey('secret-password-9'),
      maxEntries: null,
      family: 'any',
      createdAt: new Date().toISOString(),
      rotatedAt: null,
    },
  });
  changes.push({
    kind: 'feed',
    key: 'never',
    value: {
      name: 'never',
      format: 'paloalto',
      passwordHash: hashKey('secret-password-8'),
      maxEntries: null,
      family: 'any',
      createdAt: new Date().toISOString(),
      rotatedAt: null,
    },
  });
  await decide(server, changes);

  // A rule-made block from a record posted over real TLS: the newest of all.
  const reply = await post(
    server.url,
    '/generic',
    [genericRecord({ source_ip: '198.51.100.7', criticality: 4 })],
    {
      sensor: 'fw1',
      key,
      agent: server.agent,
    },
  );
  assert.equal(reply.status, 200, reply.text);
  // The firewall pulls its feed (real TLS, Basic): its last fetch shows on the panel.
  await until(
    async () => {
      const res = await request(`${server.url}/feeds/edge`, {
        headers: { authorization: `Basic ${Buffer.from('edge:secret-password-9').toString('base64')}` },
        dispatcher: server.agent,
      });
      const text = await res.body.text();
      return res.statusCode === 200 && text.includes('198.51.100.7');
    },
    GUARD_MS,
    'the block in the feed',
  );

  let panel: Panel | null = null;
  await until(
    async () => {
      const { status, body } = await getJson(
        server,
        '/api/blocklist?check=198.51.100.7,192.0.2.200,2001:db8:5:6::99,::ffff:203.0.113.5,192.0.2.1,not-an-address',
      );
      assert.equal(status, 200);
      panel = body as Panel;
      return (
        panel.blocks[0]?.address === '198.51.100.7/32' &&
        panel.feeds.find((f) => f.name === 'edge')?.lastFetch?.status === 200
      );
    },
    GUARD_MS,
    'the panel with the rule-made block and the feed fetch',
  );
  const p = panel as unknown as Panel;
  assert.equal(p.total, 153, 'active blocks: 150 + kept out + markup + the rule-made one');
  assert.equal(p.maxBlocks, 250_000, 'the bound, blocklist.maxBlocks by default');
  assert.equal(p.blocks.length, 100);
  const first = p.blocks[0] as Panel['blocks'][number];
  assert.equal(first.rule, 'critical');
  assert.equal(first.allowedBy, null);
  // Newest first, all active.
  for (let i = 1; i < p.blocks.length; i++)
    assert.ok((p.blocks[i - 1] as Block).since >= (p.blocks[i] as Block).since);
  assert.ok(!p.blocks.some((b) => b.address === '203.0.113.200/32'));
  const scripted = p.blocks.find((b) => b.address === '2001:db8:5:6::/64');
  assert.equal(scripted?.reason, SCRIPT_REASON);
  assert.equal(p.blocks.find((b) => b.address === '192.0.2.200/32')?.allowedBy, '192.0.2.128/25');
  assert.equal(p.keptOut, 1);
  // Allow entries: the configuration's and the command's.
  assert.deepEqual(p.allow.map((a) => [a.network, a.source]).sort(), [
    ['192.0.2.128/25', 'configuration'],
    ['198.18.0.0/15', 'command'],
  ]);
  assert.equal(p.allowTotal, 2);
  const edge = p.feeds.find((f) => f.name === 'edge');
  assert.equal(edge?.format, 'plain');
  assert.equal(edge?.lastFetch?.address, '127.0.0.1');
  assert.ok(Math.abs(Date.parse(edge?.lastFetch?.at ?? '') - Date.now()) < 60_000);
  assert.equal(p.feeds.find((f) => f.name === 'never')?.lastFetch, null);
  // Marking: the rule-made block, an address in a /64, an IPv4-mapped address; not one kept out, not a
  // neighbour, not garbage.
  assert.deepEqual(Object.keys(p.blocked ?? {}).sort(), [
    '198.51.100.7',
    '2001:db8:5:6::99',
    '::ffff:203.0.113.5',
  ]);
  assert.equal(p.blocked?.['198.51.100.7']?.rule, 'critical');
  assert.equal(p.blocked?.['2001:db8:5:6::99']?.address, '2001:db8:5:6::/64');

  // Bounded whatever the input: too many addresses to check is a 400, not a long answer. The answer says how
  // many one request may hold (the dashboard asks about no more).
  assert.equal(p.maxChecked, 500);
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => `203.0.${i >> 8}.${i & 255}`).join(',');
  assert.equal((await getJson(server, `/api/blocklist?check=${upTo(p.maxChecked)}`)).status, 200);
  const refused = await getJson(server, `/api/blocklist?check=${upTo(p.maxChecked + 1)}`);
  assert.equal(refused.status, 400);
  // A block removed is unmarked within a second of the change (the listener watches the store).
  await decide(server, [{ kind: 'block', key: '198.51.100.7/32', value: null }]);
  const ms = await until(
    async () => {
      const { body } = await getJson(server, '/api/blocklist?check=198.51.100.7');
      return Object.keys((body as Panel).blocked ?? {}).length === 0;
    },
    GUARD_MS,
    'the removed block unmarked',
  );
  t.diagnostic(`a removed block left the panel ${ms} ms after the change`);
});
