// Closing a NATS-backed store ends in bounded time whatever the server does: a server that stopped answering
// (SIGSTOP: the socket stays open, nothing is answered, so the client has not noticed anything) must not keep
// serve's stop, a CLI command or a test process waiting on a drain that cannot finish; and serve's stop as a
// whole is bounded, whatever step hangs. Uses dist/ (npm run build).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { pino } from 'pino';
import { openNatsStore } from '../../src/store/nats/open-nats-store.js';
import { spawnServe } from '../helpers/cli.js';
import { natsBackend, startNatsServer } from '../helpers/nats-server.js';
import { stopProcess } from '../helpers/stop-process.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('a store whose NATS server stopped answering closes within seconds, its client closed', async (t) => {
  const { node, dataDir, config } = await natsBackend(t);
  const store = await openNatsStore(config, { logger: pino({ level: 'silent' }), dataDir });
  await until(async () => (await store.health()).ok, 20_000, 'the store is healthy');
  await freezeUntilTheEnd(t, node.pid as number);
  const started = Date.now();
  const outcome = await Promise.race([
    store.close().then(() => 'closed' as const),
    new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 15_000).unref()),
  ]);
  assert.equal(outcome, 'closed', 'close() still waiting 15 s later');
  assert.ok(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms`);
});

test('serve stops within its 12 s limit on a frozen NATS server, naming a step that hung; the engine, whose lease cannot be given back, is ended after 3 s', async (t) => {
  const node = await startNatsServer(t);
  const env = {
    THREATCOL_STORE_BACKEND: 'nats',
    THREATCOL_NATS_SERVERS: node.url,
    // Each request to the frozen server waits this long: the engine's lease given back at its stop would too,
    // but its thread is ended after 3 s.
    THREATCOL_NATS_PUBLISH_TIMEOUT_MS: '60000',
  };
  const dir = makeTempDir(t);
  const config = join(makeTempDir(t), 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ blocklist: { rules: { critical: { minCriticality: 4, duration: '1h' } } } }),
  );
  const serve = await spawnServe(dir, ['--config', config], { env, timeoutMs: 60_000 });
  t.after(() => serve.stop('SIGKILL'));
  await until(
    () => serve.logs.some((l) => l.msg === 'this collector runs the decisions engine now'),
    30_000,
    'the engine leads',
  );
  await freezeUntilTheEnd(t, node.pid as number);
  const started = Date.now();
  serve.child.kill('SIGTERM');
  // A hang guard far past the limit: before the limit, the stop waited out the 60 s request timeout; the whole
  // stop's limit (12 s, exit 70, the step named) is the last resort, which the engine's own no longer needs.
  const outcome = await Promise.race([
    serve.exited,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 45_000).unref()),
  ]);
  const ms = Date.now() - started;
  assert.ok(outcome, `serve still stopping ${ms} ms after SIGTERM`);
  const cut = serve.logs.find(
    (l) => typeof l.msg === 'string' && l.msg.startsWith('the decisions engine did not stop in time'),
  );
  assert.ok(cut, 'the engine cut short is logged');
  assert.equal(cut.level, 40);

  // Another step that waits on NATS is cut by the limit of the whole stop, and named.
  const limit = serve.logs.find(
    (l) => typeof l.msg === 'string' && l.msg.startsWith('stopping did not finish'),
  );
  t.diagnostic(`exit ${outcome.code} after ${ms} ms; the whole stop's limit named: ${limit?.step ?? 'none'}`);
  if (limit === undefined)
    assert.equal(outcome.code, 0, `exit ${outcome.code ?? outcome.signal} after ${ms} ms`);
  else {
    assert.equal(outcome.code, 70, `exit ${outcome.code ?? outcome.signal} after ${ms} ms`);
    assert.notEqual(limit.step, 'stopping the decisions engine and the silence watcher');
    assert.equal(limit.level, 50);
  }
});

/** Stops the NATS server (SIGSTOP: it answers nothing, its sockets stay open) and continues it when the test ends. */
async function freezeUntilTheEnd(t: TestContext, pid: number): Promise<void> {
  t.after(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // already gone (the file's cleanup ended it)
    }
  });
  await stopProcess(pid);
}
