// The outputs' thread ended under the collector (a crash of the thread itself, here its termination): logged,
// started again, and the output goes on from its durable position, nothing skipped. runOutputs runs in this
// process with a real files store, the real thread and a loopback webhook receiver; the thread is reached by
// wrapping node:worker_threads' Worker before run-outputs.ts is loaded (syncBuiltinESMExports).
import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { type TestContext, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { type Logger, pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';
import { openStore } from '../../src/store/open-store.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { OUTPUTS_THREAD_MS, until } from '../helpers/until.js';
import { record } from '../store/contract.js';
import { startReceiver } from './webhook-receiver.js';

const threads: Worker[] = [];
const workerThreads = createRequire(import.meta.url)('node:worker_threads') as { Worker: typeof Worker };
const RealWorker = workerThreads.Worker;
workerThreads.Worker = class extends RealWorker {
  constructor(...args: ConstructorParameters<typeof Worker>) {
    super(...args);
    // The outputs' threads only (tsx, loading the sources, may start threads of its own).
    if (args[1]?.name === 'threatcol outputs') threads.push(this);
  }
};
syncBuiltinESMExports();
const { runOutputs } = await import('../../src/outputs/run-outputs.js');

/** The configuration with `outputs`, over a fresh data directory. */
function configWith(dataDir: string, outputs: Record<string, Record<string, unknown>>) {
  return loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir, outputs },
  }).config;
}

/** runOutputs over a real files store in `dataDir`, stopped (then the store closed) after the test. */
async function outputsOver(t: TestContext, dataDir: string, config: Config, logger: Logger) {
  const store = await openStore(config, { dataDir, logger });
  t.after(() => store.close());
  const outputs = runOutputs({
    config,
    cursors: store.outputs,
    dataDir,
    owner: null,
    logger,
    env: {},
    now: Date.now,
  });
  t.after(() => outputs.stop());
  return { store, outputs };
}

test('the outputs thread ended: logged, started again, and forwarding resumes from the cursor', async (t) => {
  const dataDir = makeTempDir(t);
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const config = configWith(dataDir, {
    hook: { type: 'webhook', url: receiver.url, startAt: 'oldest', batch: { maxWaitMs: 20 } },
  });
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const { store, outputs } = await outputsOver(t, dataDir, config, logger);
  const log = await store.openRecordLog();
  t.after(() => log.close());
  await log.append([record({ threat: 'before' })]);
  await outputs.started();
  await until(() => receiver.accepted.size === 1, OUTPUTS_THREAD_MS, 'forwarded from the thread');
  assert.equal(threads.length, 1, JSON.stringify(logs));
  assert.ok(
    logs.some((l) => l.msg === 'output started' && l.output === 'hook'),
    "the thread's own log line",
  );

  await (threads[0] as Worker).terminate();
  await log.append([record({ threat: 'meanwhile' })]);
  const [down] = await outputs.report();
  assert.equal(down?.state, 'paused', 'shown as not forwarding while the thread is away');
  assert.match(String(down?.lastError), /outputs thread/);

  await until(() => receiver.accepted.size === 2, OUTPUTS_THREAD_MS, 'forwarding resumes in a new thread');
  assert.equal(threads.length, 2);
  await until(async () => (await outputs.report())[0]?.state === 'running', OUTPUTS_THREAD_MS);
  assert.ok(
    logs.some((l) => l.level === 50 && l.msg === 'outputs thread stopped; starting it again'),
    'the end of the thread is logged',
  );
});

test('a reload after stop (a SIGHUP during shutdown) starts no thread', async (t) => {
  const dataDir = makeTempDir(t);
  const hook = { type: 'webhook', url: 'http://127.0.0.1:9/', batch: { maxWaitMs: 20 } };
  const before = threads.length;
  const { outputs } = await outputsOver(
    t,
    dataDir,
    configWith(dataDir, { hook: { ...hook, enabled: false } }),
    pino({ level: 'silent' }),
  );
  assert.deepEqual(
    (await outputs.report()).map((r) => [r.name, r.state]),
    [['hook', 'disabled']],
    'nothing enabled: no thread',
  );
  await outputs.stop();
  const enabled = configWith(dataDir, { hook }).outputs;
  await outputs.reload(enabled);
  assert.equal(threads.length, before, 'no thread was started after stop');
});
