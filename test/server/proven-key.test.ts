// Issue 30: a keep-alive connection that proved its key is not made to hash it again on every request, but
// what the key proved must still be judged anew: a revoke, a rotation's end of grace, another key or another
// name on the same connection are refused as on a new connection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { ensureDataDir } from '../../src/data-dir/ensure-data-dir.js';
import { createFileRegistry } from '../../src/store/files/file-registry.js';
import { errorCode, post } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { openTls, postHead, readResponse } from '../helpers/raw-tls.js';
import { genericRecord } from '../helpers/records.js';
import { until } from '../helpers/until.js';

/** One request on `socket` (kept open): its status and error code. */
async function ask(socket: TLSSocket, sensor: string, key: string): Promise<string> {
  const body = JSON.stringify(genericRecord());
  const answer = readResponse(socket);
  socket.write(postHead('/generic', sensor, key, Buffer.byteLength(body)) + body);
  const text = await answer;
  const status = /^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? text;
  const code = /"code":"([A-Z_]+)"/.exec(text)?.[1];
  return code ? `${status} ${code}` : status;
}

test('a connection that proved its key is refused on its next request once the key is revoked, retired or another', async (t) => {
  let clock = Date.now();
  const s = await startTestServer(t, { now: () => clock });
  const fw = await s.addSensor('fw');
  const other = await s.addSensor('other');
  const socket = await openTls(s.url);
  t.after(() => socket.destroy());

  assert.equal(await ask(socket, 'fw', fw), '200');
  assert.equal(await ask(socket, 'fw', fw), '200', 'the same headers again: still the sensor');
  assert.equal(await ask(socket, 'fw', `${fw}x`), '401 AUTH_INVALID', 'another key on the same connection');
  assert.equal(await ask(socket, 'other', fw), '401 AUTH_INVALID', 'the key under another name');
  assert.equal(await ask(socket, 'other', other), '200', 'a connection may carry two sensors');
  assert.equal(await ask(socket, 'fw', fw), '200');

  // Rotated with a grace period: the old key is good until it ends, then refused on the same connection.
  const registry = createFileRegistry({ dataDir: s.dataDir, owner: ensureDataDir(s.dataDir) });
  const rotated = await registry.rotate('fw', 60_000);
  s.daemon.reload();
  await until(
    async () =>
      (await post(s.url, '/generic', genericRecord(), { sensor: 'fw', key: rotated.key, agent: s.agent }))
        .status === 200,
    10_000,
    'the daemon sees the rotation',
  );
  assert.equal(await ask(socket, 'fw', fw), '200', 'the old key within its grace');
  clock = Date.parse(rotated.oldKeysExpireAt) + 1;
  assert.equal(await ask(socket, 'fw', fw), '401 AUTH_INVALID', 'the old key after its grace');
  assert.equal(await ask(socket, 'fw', rotated.key), '200');

  await s.revokeSensor('fw');
  await until(
    async () =>
      errorCode(
        await post(s.url, '/generic', genericRecord(), { sensor: 'fw', key: rotated.key, agent: s.agent }),
      ) === 'SENSOR_REVOKED',
    10_000,
    'the daemon sees the revoke',
  );
  assert.equal(
    await ask(socket, 'fw', rotated.key),
    '403 SENSOR_REVOKED',
    'revoked: refused on the same connection',
  );
  assert.equal(await ask(socket, 'other', other), '200');
});
