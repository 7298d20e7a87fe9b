// Measures one output's forwarding: a prefilled store (distinct records) sent through the real forwarder and
// webhook receiver to a loopback receiver in another process; prints records per second of wall time and of
// the forwarder process's CPU. Run: node --import tsx test/bench/outputs-forwarding.ts [MiB] [batch]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { startForwarder } from '../../src/outputs/forwarder.js';
import { openStore } from '../../src/store/open-store.js';
import { prefillStore } from './prefill.js';

const mib = Number(process.argv[2] ?? 64);
const batch = Number(process.argv[3] ?? 1000);
const dataDir = mkdtempSync(join(tmpdir(), 'threatcol-bench-out-'));
const filled = prefillStore(dataDir, mib * 1024 * 1024);
// The receiver runs in its own process: its CPU is not the forwarder's.
const receiver = fork(new URL('./webhook-sink.mjs', import.meta.url), [], { stdio: 'inherit' });
const port = await new Promise<number>((resolve) => receiver.once('message', (m) => resolve(m as number)));
const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir } });
const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
const output = applyOutputDefaults({
  type: 'webhook',
  url: `http://127.0.0.1:${port}/sink`,
  startAt: 'oldest',
  batch: { maxRecords: batch, maxBytes: 16 * 1024 * 1024, maxWaitMs: 0 },
});
let delivered = 0;
let finish: () => void = () => {};
const done = new Promise<void>((resolve) => {
  finish = resolve;
});
const cpu = process.cpuUsage();
const started = performance.now();
const forwarder = startForwarder({
  name: 'bench',
  output,
  cursors: store.outputs,
  dataDir,
  owner: null,
  logger: pino({ level: 'silent' }),
  env: {},
  now: Date.now,
  onDelivered: (n) => {
    delivered += n;
    if (delivered >= filled.records) finish();
  },
});
await done;
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
await forwarder.stop();
await store.close();
receiver.kill();
rmSync(dataDir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    records: filled.records,
    bytes: filled.bytes,
    batch,
    seconds: Number(seconds.toFixed(2)),
    recordsPerSecond: Math.round(filled.records / seconds),
    forwarderCpuSeconds: Number(cpuSeconds.toFixed(2)),
    recordsPerCpuSecond: Math.round(filled.records / cpuSeconds),
  }),
);
