// The outputs' own thread (run-outputs.ts starts it): opens the store's output cursors, runs
// start-outputs.ts at a lower CPU priority than the thread that takes records, and answers its owner's calls.
// Nothing here takes a record: when the CPU is short, ingest goes first and the outputs' lag grows instead.
// An entry point, like bin/threatcol: loading it runs the thread, so only run-outputs.ts loads it, as a Worker.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/open-store.js';
import { threadSetUp } from '../thread-module.js';
import type { OutputsCall, OutputsThreadData, ThreadMessage } from './run-outputs.js';
import { type RunningOutputs, startOutputs } from './start-outputs.js';

const port = parentPort;
if (!port) throw new Error('outputs-thread.ts runs as a worker thread (run-outputs.ts)');
const data = workerData as OutputsThreadData;
const post = (message: ThreadMessage) => port.postMessage(message);

// Every log line goes to the owner's logger: one format, one destination, the same redaction; `thread`
// tells this thread's lines apart (its own NATS connection, on that backend, says so when it drops).
const logger = threadSetUp({
  level: data.level,
  thread: 'outputs',
  send: (line) => post({ t: 'log', line }),
  nice: data.nice,
  what: 'outputs run',
});

const store = await openStore(data.config, { dataDir: data.dataDir, logger });
const outputs: RunningOutputs = startOutputs(data.config.outputs, {
  cursors: store.outputs,
  dataDir: data.dataDir,
  owner: data.owner,
  logger,
  env: data.env,
  now: Date.now,
  ...data.timing,
});

async function answer(call: OutputsCall): Promise<unknown> {
  switch (call.op) {
    case 'report':
      return outputs.report();
    case 'metricRows':
      return outputs.metricRows();
    case 'reload':
      return outputs.reload(call.outputs);
    case 'poke':
      return outputs.poke();
    case 'level':
      logger.level = call.level;
      return undefined;
    case 'started':
      return outputs.started();
    case 'stop':
      await outputs.stop();
      await store.close();
      return undefined;
  }
}

port.on('message', (call: OutputsCall) => {
  answer(call).then(
    (value) => post({ t: 'reply', id: call.id, value }),
    (error: unknown) => post({ t: 'reply', id: call.id, error: (error as Error).message }),
  );
});
post({ t: 'ready' });
