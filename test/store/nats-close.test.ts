// Closing a NATS-backed store ends in bounded time whatever the server does: a server that stopped answering
// (SIGSTOP: the socket stays open, nothing is answered, so the client has not noticed anything) must not keep
// serve's stop, a CLI command or a test process waiting on a drain that cannot finish.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import { natsBackend } from '../helpers/nats-server.js';
import { stopProcess } from '../helpers/stop-process.js';
import { until } from '../helpers/until.js';

test('a store whose NATS server stopped answering closes within seconds, its client closed', async (t) => {
  const { node, dataDir, config } = await natsBackend(t);
  const store = await openNatsStore(config, { logger: pino({ level: 'silent' }), dataDir });
  await until(async () => (await store.health()).ok, 20_000, 'the store is healthy');
  const pid = node.pid as number;
  t.after(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone (the node's own cleanup killed it)
    }
  });
  await stopProcess(pid);
  const started = Date.now();
  const outcome = await Promise.race([
    store.close().then(() => 'closed' as const),
    new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 15_000).unref()),
  ]);
  assert.equal(outcome, 'closed', 'close() still waiting 15 s later');
  assert.ok(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms`);
});
