// A decisions thread that dies is started again (docs/blocklists.md, "Where it runs"): after 1 s, twice as long
// each time it dies again soon, up to a minute. The real collector in this process; the test ends the engine's
// thread from outside as a fatal error would (worker.terminate(), the Worker caught from process's 'worker'
// event), with no hook in the product. After a death: the log says so, records posted after it still become
// blocks, and /metrics's counts go on from where they were; a thread that keeps dying is not a tight loop.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { post } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/in-process-server.js';
import { genericRecord } from '../helpers/records.js';
import { until } from '../helpers/until.js';

/** Hang guard for a block after a restart (the thread starts again 1 s after its death; a block takes ~0.3 s). */
const GUARD_MS = 30_000;
const RULES = { 'blocklist.rules': { critical: { minCriticality: 4, duration: '24h' } } };

interface EngineThread {
  worker: Worker;
  at: number;
  online: Promise<void>;
  exited: Promise<void>;
}

/** Each decisions thread the process starts from now on, with when it started, in order. */
function engineThreads(t: TestContext): EngineThread[] {
  const threads: EngineThread[] = [];
  const onWorker = (worker: Worker) => {
    if (worker.threadName !== 'threatcol decisions') return;
    const online = new Promise<void>((resolve) => worker.once('online', () => resolve()));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    threads.push({ worker, at: Date.now(), online, exited });
  };
  process.on('worker', onWorker);
  t.after(() => process.off('worker', onWorker));
  return threads;
}

/** Ends the thread once it runs, as a fatal error in it would; resolves when it has exited. */
async function kill(thread: EngineThread): Promise<void> {
  await thread.online;
  await thread.worker.terminate();
  await thread.exited;
}

async function metric(server: TestServer, line: RegExp): Promise<number | null> {
  const text = await (await fetch(`${server.adminUrl}/metrics`)).text();
  const found = line.exec(text);
  return found ? Number(found[1]) : null;
}

const made = (server: TestServer) =>
  metric(server, /^threatcol_blocks_made_total\{rule="critical"\} (\d+)$/m);
const active = (server: TestServer) => metric(server, /^threatcol_blocks_active (\d+)$/m);
const deaths = (server: TestServer) =>
  server.logs.filter((l) => l.msg === 'decisions engine stopped; starting it again');

test('a decisions thread that dies is started again: the death is logged, records posted after it become blocks, and the counts go on', async (t) => {
  const threads = engineThreads(t);
  const server = await startTestServer(t, { overrides: RULES });
  const key = await server.addSensor('fw1');
  const critical = async (address: string) => {
    const record = genericRecord({ source_ip: address, criticality: 4 });
    return post(server.url, '/generic', [record], { sensor: 'fw1', key, agent: server.agent });
  };
  const send = async (address: string) => {
    const reply = await critical(address);
    assert.equal(reply.status, 200, reply.text);
  };
  await until(() => threads.length === 1, GUARD_MS, 'the engine thread starts');
  // The sensor is read within the registry's poll: posted again until it is taken.
  const taken = async () => (await critical('198.51.100.1')).status === 200;
  await until(taken, GUARD_MS, 'the first record is taken', 100);
  await until(async () => (await made(server)) === 1, GUARD_MS, 'the first block is made', 50);

  await kill(threads[0] as EngineThread);
  const died = Date.now();
  // Posted while no thread runs: read from the engine's cursor by the next one.
  await send('198.51.100.2');
  await until(() => deaths(server).length === 1, GUARD_MS, 'the death is logged');
  const [death] = deaths(server);
  assert.equal(death?.level, 50, 'at error');
  assert.equal(death?.retryInMs, 1000, 'started again after 1 s');
  assert.match(String(death?.err), /exited with code/);

  let seen = '';
  const took = await until(
    async () => {
      const counts = [await made(server), await active(server)];
      seen = `made ${counts[0]}, active ${counts[1]}`;
      return counts[0] === 2 && counts[1] === 2;
    },
    GUARD_MS,
    'the record posted after the death is blocked, counted after the first block',
    50,
  ).catch((error: Error) => assert.fail(`${error.message} (last: ${seen})`));
  t.diagnostic(
    `block of a record posted after the death: ${Date.now() - died} ms after it (${took} ms waited)`,
  );
  assert.equal(threads.length, 2, 'one thread started again');
  await send('198.51.100.3');
  await until(async () => (await made(server)) === 3, GUARD_MS, 'the thread started again goes on', 50);
  assert.equal(deaths(server).length, 1, 'it died once');
});

test('a decisions thread that keeps dying is started again after 1, 2, then 4 s: never in a tight loop', async (t) => {
  const threads = engineThreads(t);
  const server = await startTestServer(t, { overrides: RULES });
  // Every thread dies as soon as it runs: three restarts take 1 + 2 + 4 s at the least.
  const exits: number[] = [];
  let killed = 0;
  let stopped = false;
  const killing = (async () => {
    while (!stopped && killed < 4) {
      const next = threads[killed];
      if (!next) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      await kill(next);
      exits.push(Date.now());
      killed++;
    }
  })();
  t.after(() => {
    stopped = true;
    return killing;
  });
  await until(() => threads.length >= 4, 60_000, 'three restarts', 50);
  const window = threads[3]?.at ?? 0;
  const waits = [1, 2, 3].map((i) => (threads[i]?.at ?? 0) - (exits[i - 1] ?? 0));
  t.diagnostic(`waits before each restart: ${waits.join(', ')} ms`);
  // A timer never fires early: each wait is at least the doubled delay (a busy box only lengthens it).
  assert.ok((waits[0] ?? 0) >= 990, `first wait ${waits[0]} ms`);
  assert.ok((waits[1] ?? 0) >= 1990, `second wait ${waits[1]} ms`);
  assert.ok((waits[2] ?? 0) >= 3990, `third wait ${waits[2]} ms`);
  assert.ok(window - (threads[0]?.at ?? 0) >= 7000, 'four threads took at least 7 s');
  assert.deepEqual(
    deaths(server)
      .slice(0, 3)
      .map((l) => l.retryInMs),
    [1000, 2000, 4000],
    'each death logged with its wait',
  );
  stopped = true;
  await killing;
});
