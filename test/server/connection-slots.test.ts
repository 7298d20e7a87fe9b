// Black box: the HTTPS listener's connection slots under a flood of silent sockets from several addresses: a
// sensor that connects and posts is answered (the oldest silent socket makes room for it), within a few tries.
import assert from 'node:assert/strict';
import test from 'node:test';
import { freshConnectionTries } from '../helpers/client.js';
import { startTestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';
import { floodSilentSockets } from '../helpers/silent-sockets.js';
import { until } from '../helpers/until.js';

const TRIES = 3;

test('silent sockets filling the HTTPS listener: a sensor is answered 200 within 3 fresh connections', async (t) => {
  // 512 in all, 64 per address: 9 addresses of 64 silent sockets (576) fill it and keep 64 more knocking.
  const server = await startTestServer(t, {
    overrides: { 'log.level': 'info', 'server.maxConnections': 512, 'server.maxConnectionsPerAddress': 64 },
  });
  const key = await server.addSensor('fw1');
  const port = Number(new URL(server.url).port);
  const flood = floodSilentSockets(
    t,
    port,
    Array.from({ length: 9 }, (_, i) => `127.0.0.${i + 2}`),
    64,
  );
  await until(() => flood.connects() >= 600, 30_000, 'the flood fills the listener');

  const statuses = await freshConnectionTries(server, 'fw1', key, [genericRecord()], TRIES);
  const floodConnects = flood.connects();
  await flood.stop();
  t.diagnostic(`tries: ${statuses.join(', ')}; the flood opened ${floodConnects} connections`);
  assert.ok(statuses.includes(200), `no 200 in ${TRIES} tries: ${statuses.join(', ')}`);
});
