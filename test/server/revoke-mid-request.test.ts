// Issue 27 F9: a request whose body was still arriving when its sensor was revoked must not land. Before, the
// key was checked only when the headers came, so a slow body begun before `sensor revoke` was stored and
// answered 200 after it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { openTls, postHead, readResponse } from '../helpers/raw-tls.js';
import { genericRecord, readStored } from '../helpers/records.js';
import { until } from '../helpers/until.js';

test('F9: a sensor revoked while its body arrives gets 403 SENSOR_REVOKED, and nothing is stored', async (t) => {
  const s = await startTestServer(t, { overrides: { 'server.bodyStallTimeoutMs': 60_000 } });
  const key = await s.addSensor('fw');
  const other = await s.addSensor('other');
  const body = JSON.stringify(genericRecord({ threat: 'begun before the revoke' }));
  const half = Math.floor(body.length / 2);
  const socket = await openTls(s.url);
  t.after(() => socket.destroy());
  const answer = readResponse(socket);
  socket.write(postHead('/generic', 'fw', key, Buffer.byteLength(body)) + body.slice(0, half));

  await s.revokeSensor('fw');
  // The daemon has seen the revoke once a new request with the same key is refused.
  await until(
    async () =>
      errorCode(await post(s.url, '/generic', genericRecord(), { sensor: 'fw', key, agent: s.agent })) ===
      'SENSOR_REVOKED',
    10_000,
    'the daemon sees the revoke',
  );
  socket.write(body.slice(half));
  const reply = await answer;
  assert.match(reply, /^HTTP\/1\.1 403 /, reply || '(no answer)');
  assert.match(reply, /"code":"SENSOR_REVOKED"/, reply);
  assert.deepEqual(readStored(s.dataDir), []);

  // A change to another sensor mid-request does not refuse this one.
  const slow = await openTls(s.url);
  t.after(() => slow.destroy());
  const kept = readResponse(slow);
  slow.write(postHead('/generic', 'other', other, Buffer.byteLength(body)) + body.slice(0, half));
  const third = await s.addSensor('third');
  await until(
    async () =>
      (
        await post(s.url, '/generic', genericRecord({ threat: 'third' }), {
          sensor: 'third',
          key: third,
          agent: s.agent,
        })
      ).status === 200,
    10_000,
    'the daemon reads the registry again',
  );
  slow.write(body.slice(half));
  const keptReply = await kept;
  assert.match(keptReply, /^HTTP\/1\.1 200 /, keptReply || '(no answer)');
  assert.deepEqual(
    readStored(s.dataDir).map((r) => [r.sensor, r.threat]),
    [
      ['third', 'third'],
      ['other', 'begun before the revoke'],
    ],
  );
});
