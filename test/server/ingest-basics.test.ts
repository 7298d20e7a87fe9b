// Black-box: both endpoints accept valid records over real TLS and store them durably in the documented shape.
import assert from 'node:assert/strict';
import { isAscii, isUtf8 } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { listSegments, threatsDir } from '../../src/store/files/segments.js';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { firewallRecord, genericRecord, readStored } from '../helpers/records.js';
import { until } from '../helpers/until.js';

test('a generic record is stored with the DESIGN 3 shape and answered with its id', async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('sensor-a');
  const reply = await post(s.url, '/generic', genericRecord(), { agent: s.agent, sensor: 'sensor-a', key });
  assert.equal(reply.status, 200, reply.text);
  const body = reply.json as { accepted: number; ids: string[] };
  assert.equal(body.accepted, 1);
  const stored = readStored(s.dataDir);
  assert.equal(stored.length, 1);
  const r = stored[0] as Record<string, unknown>;
  assert.equal(r.id, body.ids[0]);
  assert.match(String(r.id), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.deepEqual(
    { ...r, id: undefined, received_at: undefined },
    {
      id: undefined,
      received_at: undefined,
      sensor: 'sensor-a',
      endpoint: 'generic',
      criticality: 3,
      severity: 'high',
      criticality_source: 'sender',
      src_ip: '203.0.113.5',
      dst_ip: '2001:db8::1',
      dst_port: 22,
      protocol: 'TCP',
      threat: 'SSH brute force',
      remote_addr: '127.0.0.1',
      original: genericRecord(),
    },
  );
  assert.ok(Math.abs(Date.parse(String(r.received_at)) - Date.now()) < 60_000);
});

test('a firewall record is stored with derived criticality, split threat id and UTC detected_at', async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('fw-berlin', { timezone: 'Europe/Berlin' });
  const input = firewallRecord({ sport: '51234', severity: 'CRITICAL', criticality: 0 });
  const reply = await post(s.url, '/firewall', input, { agent: s.agent, sensor: 'fw-berlin', key });
  assert.equal(reply.status, 200, reply.text);
  const [r] = readStored(s.dataDir);
  assert.ok(r);
  assert.equal(r.endpoint, 'firewall');
  assert.equal(r.criticality, 4);
  assert.equal(r.severity, 'critical');
  assert.equal(r.criticality_source, 'severity');
  assert.equal(r.threat, 'EICAR Test File Detection');
  assert.equal(r.threat_id, '86708');
  assert.equal(r.src_port, 51234);
  assert.equal(r.dst_port, 443);
  assert.equal(r.protocol, 'tcp');
  // 2026/11/21 10:15:30 in Berlin (CET, UTC+1) is 09:15:30Z.
  assert.equal(r.detected_at, '2026-11-21T09:15:30.000Z');
  assert.deepEqual(r.original, input);
  assert.equal(r.repaired, undefined);
});

test('an unauthenticated request is refused before the body is read', async (t) => {
  const s = await startTestServer(t);
  const reply = await post(s.url, '/generic', '{not json', { agent: s.agent });
  assert.equal(reply.status, 401);
  assert.equal(errorCode(reply), 'AUTH_MISSING');
  assert.deepEqual(readStored(s.dataDir), []);
});

test('stored lines are UTF-8 whatever the characters: raw non-ASCII, \\u escapes of it, a sensor name that is not ASCII', async (t) => {
  // ASCII bodies (nearly all) are encoded as latin1, the same bytes; anything that may not be ASCII must not be.
  const s = await startTestServer(t);
  const plain = { agent: s.agent, sensor: 'sensor-a', key: await s.addSensor('sensor-a') };
  const key = await s.addSensor('sensor-e');
  // A name `sensor add` refuses but a hand-edited registry may hold; header values travel as latin1.
  const registry = join(s.dataDir, 'sensors.json');
  writeFileSync(registry, readFileSync(registry, 'utf8').replace('"sensor-e"', '"sensor-é"'));
  s.daemon.reload();
  const accented = { agent: s.agent, sensor: 'sensor-é', key };
  const renamed = async () => (await post(s.url, '/generic', genericRecord(), accented)).status === 200;
  await until(renamed, 10_000, 'the renamed sensor accepted');
  // An ASCII body whose escapes decode to characters that are not ASCII.
  const escaped = JSON.stringify(genericRecord({ threat: 'caf\u00e9 😀' })).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  assert.equal(isAscii(Buffer.from(escaped)), true);
  assert.equal((await post(s.url, '/generic', escaped, plain)).status, 200);
  assert.equal((await post(s.url, '/generic', genericRecord({ threat: 'naïve ✓' }), plain)).status, 200);
  const raw = Buffer.concat(listSegments(threatsDir(s.dataDir)).map((seg) => readFileSync(seg.path)));
  assert.equal(isUtf8(raw), true);
  const stored = readStored(s.dataDir).slice(-3);
  assert.deepEqual(
    stored.map((r) => [r.sensor, r.threat]),
    [
      ['sensor-é', 'SSH brute force'],
      ['sensor-a', 'caf\u00e9 😀'],
      ['sensor-a', 'naïve ✓'],
    ],
  );
});
