// Retried deliveries are stored once (DESIGN 10): /firewall by content within dedupe.windowSeconds, /generic by
// Idempotency-Key; a duplicate gets the first delivery's ids and "duplicates": N; kill -9 does not forget.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { errorCode, post, type Reply, trustingAgent } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

interface Accepted {
  accepted: number;
  ids: string[];
  duplicates?: number;
}
const body = (reply: Reply) => reply.json as Accepted;

test('a /firewall retry within the window gets the same ids and is stored once; a changed record is new', async (t) => {
  const server = await startTestServer(t);
  const key = await server.addSensor('fw1');
  const send = (records: unknown) =>
    post(server.url, '/firewall', records, { agent: server.agent, sensor: 'fw1', key });
  const batch = [firewallRecord(), firewallRecord({ sport: 40000 })];
  const first = await send(batch);
  assert.equal(first.status, 200, first.text);
  assert.equal(body(first).duplicates, undefined, 'a first delivery has no duplicates field');
  // The retry differs only in whitespace: the same records as received.
  const retry = await send(JSON.stringify(batch, null, 2));
  assert.equal(retry.status, 200, retry.text);
  assert.deepEqual(body(retry), { accepted: 2, ids: body(first).ids, duplicates: 2 });
  // On one line with spaces (the sender's own text is kept, but is not JSON.stringify's: the key is computed
  // from the parsed record, where the first delivery's canonical text was hashed as it was): still the same.
  const spaced = await send(JSON.stringify(batch, null, 1).replace(/\n/g, ' '));
  assert.deepEqual(body(spaced), { accepted: 2, ids: body(first).ids, duplicates: 2 });
  // One old record and one new: the old keeps its id, the new is stored.
  const mixed = await send([firewallRecord({ sport: 40000 }), firewallRecord({ sport: 40001 })]);
  assert.equal(body(mixed).duplicates, 1);
  assert.equal(body(mixed).ids[0], body(first).ids[1]);
  // The same content from another sensor is another record.
  const otherKey = await server.addSensor('fw2');
  const other = await post(server.url, '/firewall', [firewallRecord()], {
    agent: server.agent,
    sensor: 'fw2',
    key: otherKey,
  });
  assert.equal(body(other).duplicates, undefined);
  const stored = readStored(server.dataDir);
  assert.equal(stored.length, 4);
  assert.deepEqual(
    stored.map((r) => r.id),
    [...body(first).ids, body(mixed).ids[1], body(other).ids[0]],
  );
  assert.ok(
    stored.every((r) => typeof r.dedupe_key === 'string' && (r.dedupe_key as string).length === 22),
    'each stored line carries its dedupe key',
  );
});

test('identical deliveries in flight at once are stored once and all get the same ids', async (t) => {
  const server = await startTestServer(t);
  const key = await server.addSensor('fw1');
  const batch = Array.from({ length: 50 }, (_, i) => firewallRecord({ sport: 1000 + i }));
  const replies = await Promise.all(
    Array.from({ length: 8 }, () =>
      post(server.url, '/firewall', batch, { agent: server.agent, sensor: 'fw1', key }),
    ),
  );
  for (const r of replies) assert.equal(r.status, 200, r.text);
  const ids = body(replies[0] as Reply).ids;
  for (const r of replies) assert.deepEqual(body(r).ids, ids);
  assert.equal(replies.filter((r) => body(r).duplicates === undefined).length, 1, 'one delivery stored them');
  assert.equal(replies.filter((r) => body(r).duplicates === 50).length, 7);
  // The same record twice in one request is stored once too.
  const twice = await post(
    server.url,
    '/firewall',
    [firewallRecord({ sport: 9 }), firewallRecord({ sport: 9 })],
    {
      agent: server.agent,
      sensor: 'fw1',
      key,
    },
  );
  assert.equal(body(twice).duplicates, 1);
  assert.equal(body(twice).ids[0], body(twice).ids[1]);
  assert.equal(readStored(server.dataDir).length, 51);
});

test('after the window a retry is stored again', async (t) => {
  let offset = 0;
  const server = await startTestServer(t, {
    now: () => Date.now() + offset,
    overrides: { 'dedupe.windowSeconds': 10 },
  });
  const key = await server.addSensor('fw1');
  const send = () =>
    post(server.url, '/firewall', [firewallRecord()], { agent: server.agent, sensor: 'fw1', key });
  const first = await send();
  offset = 9_000;
  const within = await send();
  assert.deepEqual(body(within).ids, body(first).ids, 'still within 10 s');
  // A key is remembered for the window and at most an eighth of it more (time slices).
  offset = 10_000 + 1_250 + 1_000;
  const after = await send();
  assert.equal(after.status, 200, after.text);
  assert.equal(body(after).duplicates, undefined);
  assert.notDeepEqual(body(after).ids, body(first).ids);
  assert.equal(readStored(server.dataDir).length, 2);
});

test('/generic is deduplicated only by Idempotency-Key: same key same ids, other key or none stored again', async (t) => {
  const server = await startTestServer(t);
  const key = await server.addSensor('gen');
  const send = (records: unknown, idem?: string) =>
    post(server.url, '/generic', records, {
      agent: server.agent,
      sensor: 'gen',
      key,
      ...(idem === undefined ? {} : { headers: { 'idempotency-key': idem } }),
    });
  const records = [genericRecord(), genericRecord({ threat: 'second' })];
  const plain1 = await send(records);
  const plain2 = await send(records);
  assert.notDeepEqual(
    body(plain1).ids,
    body(plain2).ids,
    'without a key identical bodies are two deliveries',
  );
  const keyed = await send(records, 'batch-0001');
  const retried = await send(records, 'batch-0001');
  assert.deepEqual(body(retried), { accepted: 2, ids: body(keyed).ids, duplicates: 2 });
  const otherKey = await send(records, 'batch-0002');
  assert.equal(body(otherKey).duplicates, undefined);
  // The key names the request: a retry with one more record stores only that one.
  const grown = await send([...records, genericRecord({ threat: 'third' })], 'batch-0001');
  assert.equal(body(grown).duplicates, 2);
  assert.deepEqual(body(grown).ids.slice(0, 2), body(keyed).ids);
  const bad = await send(records, 'x'.repeat(257));
  assert.equal(bad.status, 400);
  assert.equal(errorCode(bad), 'BAD_REQUEST');
  assert.equal(readStored(server.dataDir).length, 2 + 2 + 2 + 2 + 1);
});

test('dedupe.windowSeconds 0 turns it off: every delivery is stored, no key in the stored line', async (t) => {
  const server = await startTestServer(t, { overrides: { 'dedupe.windowSeconds': 0 } });
  const key = await server.addSensor('fw1');
  const send = (path: string, records: unknown) =>
    post(server.url, path, records, {
      agent: server.agent,
      sensor: 'fw1',
      key,
      headers: { 'idempotency-key': 'same' },
    });
  const a = await send('/firewall', [firewallRecord()]);
  const b = await send('/firewall', [firewallRecord()]);
  const c = await send('/generic', [genericRecord()]);
  const d = await send('/generic', [genericRecord()]);
  for (const r of [a, b, c, d]) assert.equal(body(r).duplicates, undefined);
  const stored = readStored(server.dataDir);
  assert.equal(stored.length, 4);
  assert.ok(stored.every((r) => !('dedupe_key' in r)));
});

test('kill -9 of serve, restart, retry: still deduplicated (the window is rebuilt from the segments)', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const first = await spawnServe(dataDir);
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const opts = { agent, sensor: 'fw1', key };
  const fw = await post(first.url, '/firewall', [firewallRecord(), firewallRecord({ dport: 8443 })], opts);
  const gen = await post(first.url, '/generic', [genericRecord()], {
    ...opts,
    headers: { 'idempotency-key': 'k-1' },
  });
  assert.equal(fw.status, 200, fw.text);
  assert.equal(gen.status, 200, gen.text);
  first.child.kill('SIGKILL');
  assert.equal((await first.exited).signal, 'SIGKILL');

  const second = await spawnServe(dataDir);
  t.after(() => second.stop());
  const rebuilt = second.logs.find((l) => l.msg === 'dedupe window rebuilt from the newest segments');
  assert.equal(rebuilt?.keys, 3, JSON.stringify(rebuilt));
  const fwRetry = await post(
    second.url,
    '/firewall',
    [firewallRecord(), firewallRecord({ dport: 8443 })],
    opts,
  );
  const genRetry = await post(second.url, '/generic', [genericRecord()], {
    ...opts,
    headers: { 'idempotency-key': 'k-1' },
  });
  assert.deepEqual(body(fwRetry), { accepted: 2, ids: body(fw).ids, duplicates: 2 });
  assert.deepEqual(body(genRetry), { accepted: 1, ids: body(gen).ids, duplicates: 1 });
  await second.stop();
  assert.equal(readStored(dataDir).length, 3);
});
