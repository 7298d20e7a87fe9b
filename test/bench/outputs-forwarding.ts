// Measures one output's forwarding (figure 12): a prefilled store (distinct record ids) sent through the real
// forwarder and receiver, to a loopback webhook sink or a real rsyslogd over TLS, each in its own process so
// their CPU is not the forwarder's; prints one JSON line: records per second of wall time and of this
// process's CPU (the forwarder and the store reads it drives). Run by figures-outputs.ts, or directly:
//   node --import tsx test/bench/outputs-forwarding.ts webhook|syslog [MiB] [batch]
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load-config.js';
import { applyOutputDefaults } from '../../src/config/outputs-schema.js';
import { startForwarder } from '../../src/outputs/forwarder.js';
import { openStore } from '../../src/store/open-store.js';
import { type Rsyslog, startRsyslog } from '../helpers/rsyslog.js';
import { until } from '../helpers/until.js';
import { prefillStore } from './prefill.js';

const type = process.argv[2] ?? 'webhook';
const mib = Number(process.argv[3] ?? 64);
const batch = Number(process.argv[4] ?? 500);
if (type !== 'webhook' && type !== 'syslog') throw new Error(`unknown receiver ${type}: webhook or syslog`);
const root = mkdtempSync(join(tmpdir(), 'threatcol-bench-out-'));
const dataDir = join(root, 'data');
const filled = prefillStore(dataDir, mib * 1024 * 1024);
const limits = { maxRecords: batch, maxBytes: 16 * 1024 * 1024, maxWaitMs: 0 };
let stopReceiver: () => Promise<void>;
let rsyslog: Rsyslog | null = null;
let receiverConfig: Record<string, unknown>;
if (type === 'webhook') {
  const sink = fork(new URL('./webhook-sink.mjs', import.meta.url), [], { stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => sink.once('message', (m) => resolve(m as number)));
  stopReceiver = async () => {
    sink.kill();
  };
  receiverConfig = { type: 'webhook', url: `http://127.0.0.1:${port}/sink` };
} else {
  mkdirSync(join(root, 'rsyslog'));
  const started = await startRsyslog(join(root, 'rsyslog'), 'tls');
  rsyslog = started;
  writeFileSync(join(root, 'ca.pem'), started.ca as string);
  stopReceiver = () => started.stop();
  receiverConfig = {
    type: 'syslog',
    host: '127.0.0.1',
    port: started.port,
    ca: join(root, 'ca.pem'),
    format: 'json',
  };
}
const { config } = loadConfig({ env: {}, defaultConfigPath: '/nonexistent', overrides: { dataDir } });
const store = await openStore(config, { dataDir, logger: pino({ level: 'silent' }) });
const output = applyOutputDefaults({ ...receiverConfig, startAt: 'oldest', batch: limits });
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
// rsyslog writes what it received to a file: every record arrived, not only left (a check, not timed).
const active = rsyslog;
if (active !== null)
  await until(() => active.lines().length >= filled.records, 120_000, 'rsyslog wrote every record', 200);
const received = active === null ? null : active.lines().length;
await stopReceiver();
rmSync(root, { recursive: true, force: true });
console.log(
  JSON.stringify({
    type,
    records: filled.records,
    received,
    bytes: filled.bytes,
    batch,
    seconds: Number(seconds.toFixed(2)),
    recordsPerSecond: Math.round(filled.records / seconds),
    forwarderCpuSeconds: Number(cpuSeconds.toFixed(2)),
    recordsPerCpuSecond: Math.round(filled.records / cpuSeconds),
  }),
);
