// Review finding: the admin listener has no connection cap (admin-server.ts: no maxConnections, no limit on
// open event streams), and in the single-process daemon it shares the file-descriptor limit with the
// sensors' port. Event streams never end by themselves, so any local user (no token on loopback) can hold
// open enough /api/feed streams to use up the collector's descriptors: sensors then cannot connect, and
// records are lost. Shown with a small limit (prlimit --nofile=200) instead of the unit's 65536.
import { strict as assert } from 'node:assert';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { addSensorCli, spawnServe } from '../helpers/cli.js';
import { post, trustingAgent } from '../helpers/client.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function openStream(port: number): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let settled = false;
    const done = (value: Socket | null) => {
      if (!settled) {
        settled = true;
        resolve(value);
      }
    };
    socket.on('error', () => done(null));
    socket.on('close', () => done(null));
    socket.once('data', () => done(socket)); // the stream's first bytes: the server holds it open
    socket.write('GET /api/feed HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    setTimeout(() => done(null), 5000).unref();
  });
}

test('admin listener: open event streams cannot take the descriptors the sensors need', async (t) => {
  const dataDir = makeTempDir(t);
  const key = await addSensorCli(dataDir, 'fw1');
  const serve = await spawnServe(dataDir, [], { prefix: ['prlimit', '--nofile=200:200', '--'] });
  t.after(() => serve.stop('SIGKILL'));
  assert.ok(serve.adminUrl);
  const port = Number(new URL(serve.adminUrl).port);
  const streams: Socket[] = [];
  t.after(() => {
    for (const s of streams) s.destroy();
  });
  for (let i = 0; i < 250; i++) {
    const s = await openStream(port);
    if (s) streams.push(s);
  }
  const agent = trustingAgent(dataDir);
  t.after(() => agent.close());
  const reply = await post(serve.url, '/generic', genericRecord(), { sensor: 'fw1', key, agent }).catch(
    (error: Error) => ({ status: 0, text: `${error.name}: ${error.message}` }),
  );
  assert.equal(
    reply.status,
    200,
    `with ${streams.length} admin event streams open, a sensor's request got: ${reply.text}; collector exit code ${serve.child.exitCode}; last log: ${JSON.stringify(serve.logs.at(-1))}`,
  );
});
