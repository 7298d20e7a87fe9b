// The decisions engine's own thread (box-engine.ts starts it): opens the store (the engine's cursor, the record
// scan, the decisions), runs the engine at a lower CPU priority than the thread that takes records, and sends
// its counts and log lines to its owner. When the CPU is short, ingest goes first and the engine's lag grows.
// An entry point, like bin/threatcol: loading it runs the thread, so only box-engine.ts loads it, as a Worker.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/open-store.js';
import { threadSetUp } from '../thread-module.js';
import { type EngineCall, type EngineMessage, type EngineThreadData, runBoxEngine } from './box-engine.js';

const port = parentPort;
if (!port) throw new Error('engine-thread.ts runs as a worker thread (box-engine.ts)');
const data = workerData as EngineThreadData;
const post = (message: EngineMessage) => port.postMessage(message);

const logger = threadSetUp({
  level: data.level,
  thread: 'decisions',
  send: (line) => post({ t: 'log', line }),
  nice: data.nice,
  what: 'the decisions engine runs',
});

/** How often counts that changed outside a write (addresses tracked, private records skipped) are sent. */
const COUNTS_MS = 1000;
let sent = '';
const sendCounts = () => {
  // Not `active`: the owner counts blocks in force off its own copy of the decisions (box-engine.ts).
  const { tracked, dropped, blocksMade, skippedPrivate, skippedAllowed, skippedFull } = engine.counts();
  const counts = { tracked, dropped, blocksMade, skippedPrivate, skippedAllowed, skippedFull };
  const text = JSON.stringify(counts);
  if (text === sent) return;
  sent = text;
  post({ t: 'counts', counts });
};

const store = await openStore(data.config, { dataDir: data.dataDir, logger });
const engine = runBoxEngine({
  config: data.config,
  dataDir: data.dataDir,
  store,
  logger,
  onWrite: sendCounts,
});
const timer = setInterval(sendCounts, COUNTS_MS);

port.on('message', (call: EngineCall) => {
  if (call.op === 'configure') engine.configure(call.blocklist);
  else if (call.op === 'level') logger.level = call.level;
  else {
    clearInterval(timer);
    void engine
      .stop()
      .catch((error: unknown) =>
        logger.error({ err: (error as Error).message }, 'cannot stop the decisions engine'),
      )
      .then(() => {
        sendCounts();
        return store.close();
      })
      .catch(() => {})
      .finally(() => post({ t: 'stopped' }));
  }
});
