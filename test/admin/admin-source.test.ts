// The dashboard's source view, GET /api/source, against the real admin listener of a collector that stored
// records posted over real TLS by two sensors: the summary of `source show` (one function), the block that
// covers the address, 400 for what is not an address; the block and allow entry `source show` names, from the
// same decisions (an address, a CIDR, a block an allow entry keeps out); and the look-up's bound, which says it cut
// the read short.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import type { DecisionChange } from '../../src/store/decisions.js';
import { summarizeSource } from '../../src/store/source-summary.js';
import { runCli } from '../helpers/cli.js';
import { post } from '../helpers/client.js';
import { blockChange, withServerStore } from '../helpers/decisions.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';

async function getJson(
  server: TestServer,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${server.adminUrl}${path}`);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

test('GET /api/source: the summary of one source across sensors, its block, 400 for a bad address', {
  timeout: 120_000,
}, async (t) => {
  const server = await startTestServer(t);
  const sensors = ['fw-a', 'fw-b'];
  for (const [i, sensor] of sensors.entries()) {
    const key = await server.addSensor(sensor);
    const records = [
      genericRecord({
        source_ip: '198.51.100.7',
        destination_ip: '203.0.113.1',
        destination_port: 22,
        criticality: 3,
        threat: 'SSH brute force',
      }),
      genericRecord({
        source_ip: '198.51.100.7',
        destination_ip: `203.0.113.${10 + i}`,
        destination_port: 443,
        criticality: 4,
        threat: '<script>x</script>',
      }),
      genericRecord({ source_ip: '192.0.2.1', criticality: 1 }),
    ];
    const reply = await post(server.url, '/generic', records, { sensor, key, agent: server.agent });
    assert.equal(reply.status, 200, reply.text);
  }
  const { status, body } = await getJson(server, '/api/source?address=198.51.100.7&since=1h');
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.records, 4);
  assert.deepEqual(body.criticality, [0, 0, 0, 2, 2]);
  assert.deepEqual(body.sensors, sensors);
  assert.equal(body.targets, 3);
  assert.equal(body.ports, 2);
  assert.deepEqual(body.threats, [
    { threat: '<script>x</script>', count: 2 },
    { threat: 'SSH brute force', count: 2 },
  ]);
  assert.equal(body.blocked, null);
  assert.equal(body.allowed, null);
  // The same function as `source show`: the same answer, read through a store of its own.
  const direct = await withServerStore(server, (store) =>
    summarizeSource(store.reader, { address: '198.51.100.7', since: Date.parse(body.since as string) }),
  );
  const { blocked: _b, allowed: _a, since: _s, blocks_within, blocks_within_first: _f, ...sums } = body;
  assert.equal(blocks_within, 0);
  assert.deepEqual(sums, direct);
  // A block in force covers it once the panel's watch has it.
  const now = Date.now();
  const changes: DecisionChange[] = [blockChange('198.51.100.7/32', now - 1000, now + 3_600_000)];
  await withServerStore(server, (store) => store.decisions.apply(changes));
  let blocked: unknown = null;
  for (let i = 0; i < 100 && blocked === null; i++) {
    blocked = (await getJson(server, '/api/source?address=198.51.100.7')).body.blocked;
    if (blocked === null) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The whole block, as `source show` names it.
  assert.deepEqual(blocked, (changes[0] as { value: unknown }).value);
  assert.deepEqual(
    (({ address, rule, until }) => ({ address, rule, until }))(blocked as Record<string, unknown>),
    { address: '198.51.100.7/32', rule: 'manual', until: new Date(now + 3_600_000).toISOString() },
  );
  for (const query of ['address=192.0.2.300', 'address=', 'address=192.0.2.1&since=31d', 'address=fw-a']) {
    const bad = await getJson(server, `/api/source?${query}`);
    assert.equal(bad.status, 400, query);
    assert.equal((bad.body.error as { code: string }).code, 'BAD_REQUEST');
  }
});

test('source summary: the look-up bound stops the read and says so, counting the newest records read', {
  timeout: 60_000,
}, async (t) => {
  const server = await startTestServer(t);
  const key = await server.addSensor('fw-a');
  const records = Array.from({ length: 20 }, (_, i) =>
    genericRecord({ source_ip: '198.51.100.7', destination_port: 1000 + i }),
  );
  const reply = await post(server.url, '/generic', records, { sensor: 'fw-a', key, agent: server.agent });
  assert.equal(reply.status, 200, reply.text);
  const since = Date.now() - 3_600_000;
  const whole = await withServerStore(server, (store) =>
    summarizeSource(store.reader, { address: '198.51.100.7', since }),
  );
  assert.equal(whole.records, 20);
  assert.equal(whole.bounded, null);
  const cut = await withServerStore(server, (store) =>
    summarizeSource(store.reader, { address: '198.51.100.7', since }, { maxRecords: 5 }),
  );
  assert.ok(cut.records >= 4 && cut.records <= 6, `records read: ${cut.records}`);
  assert.deepEqual(cut.bounded, { maxRecords: 5, maxBytes: 512 * 1024 * 1024 });
});

test('GET /api/source names the block and allow entry `source show --json` names: an address, a CIDR, a block kept out', {
  timeout: 120_000,
}, async (t) => {
  const server = await startTestServer(t);
  const args = ['--data-dir', server.dataDir];
  for (const decision of [
    ['block', 'add', '198.51.100.0/24', '--for', '1h', '--reason', 'scanning'],
    ['block', 'add', '203.0.113.5', '--for', '2h', '--reason', 'brute force'],
    ['allow', 'add', '203.0.113.0/28', '--reason', 'the lab'],
  ]) {
    const r = await runCli([...decision, ...args]);
    assert.equal(r.code, 0, `${decision.join(' ')}: ${r.stderr}`);
  }
  for (const address of ['198.51.100.7', '198.51.100.0/25', '203.0.113.5', '203.0.113.0/29', '192.0.2.1']) {
    const cli = await runCli(['source', 'show', address, '--json', ...args]);
    assert.equal(cli.code, 0, cli.stderr);
    const { blocked, allowed, blocks_within, blocks_within_first } = JSON.parse(cli.stdout) as Record<
      string,
      unknown
    >;
    const want = JSON.stringify({ blocked, allowed, blocks_within, blocks_within_first });
    // The admin's copy of the decisions follows the store within a second or so; a hang guard, not a speed claim.
    let got = '';
    for (let i = 0; i < 100 && got !== want; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      const { status, body } = await getJson(server, `/api/source?${new URLSearchParams({ address })}`);
      assert.equal(status, 200, JSON.stringify(body));
      got = JSON.stringify({
        blocked: body.blocked,
        allowed: body.allowed,
        blocks_within: body.blocks_within,
        blocks_within_first: body.blocks_within_first,
      });
    }
    assert.deepEqual(JSON.parse(got), JSON.parse(want), address);
    if (address !== '192.0.2.1') assert.ok(blocked !== null || allowed !== null, address);
    // 203.0.113.0/29 is not blocked whole: the block of 203.0.113.5 lies inside it.
    if (address === '203.0.113.0/29')
      assert.deepEqual([blocks_within, blocks_within_first], [1, ['203.0.113.5/32']]);
  }
});
