// `node --import tsx test/bench/profile-outputs.ts [seconds] [--nats] [--no-prof]`: one collector with a webhook
// output forwarding to the loopback sink (webhook-sink.mjs), under figure 13's keep-alive load, its CPU profile
// written to test/bench/results/profiles/ for `profile-summary.ts`: where an attached output's cost goes.
import { fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Cleanups, runCleanups, startNatsBackend } from './figures-nats.js';
import { cpuMicrosPerRequest, LoadWorker, type Measured, standardWorkload } from './load.js';
import { detectPinning, ROOT, startThreatcol } from './processes.js';
import { median } from './report.js';

const seconds = Number(process.argv[2] ?? 5);
const nats = process.argv.includes('--nats');
const prof = !process.argv.includes('--no-prof');
/** --none: the same collector without the output, the reference to read the profile against. */
const none = process.argv.includes('--none');
const pin = detectPinning();
const dir = join(ROOT, 'test/bench/results/profiles');
mkdirSync(dir, { recursive: true });
const root = mkdtempSync(join(tmpdir(), 'threatcol-profile-outputs-'));
const worker = new LoadWorker(pin);
const cleanups: Cleanups = [];
const sink = fork(join(ROOT, 'test/bench/webhook-sink.mjs'), [], { stdio: 'inherit' });
try {
  const port = await new Promise<number>((resolve) => sink.once('message', (m) => resolve(m as number)));
  const config = join(root, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({ outputs: { sink: { type: 'webhook', url: `http://127.0.0.1:${port}/sink` } } }),
  );
  const name = `outputs-${nats ? 'nats' : 'files'}${none ? '-none' : ''}-${Date.now()}.cpuprofile`;
  const args = none ? [] : ['--config', config];
  // PROFILE_NODE_ARGS: extra node flags for the collector (e.g. --trace-gc, shown with BENCH_DEBUG=1).
  const extra = (process.env.PROFILE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const nodeArgs = [
    ...extra,
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`] : []),
  ];
  const tc = nats
    ? (await startNatsBackend('threatcol', 1, join(root, 'tc'), pin, cleanups, nodeArgs, undefined, args))
        .server
    : await startThreatcol('threatcol', join(root, 'tc'), pin, { nodeArgs, args });
  const w = standardWorkload('firewall', seconds);
  const runs: Measured[] = [];
  try {
    await worker.measure('autocannon', tc, tc, { ...w, seconds: 1 });
    for (let i = 0; i < 3; i++) runs.push(await worker.measure('autocannon', tc, tc, w));
  } finally {
    await tc.stop();
  }
  const us = median(runs.map(cpuMicrosPerRequest));
  const rate = median(runs.map((m) => m.recordsPerSecond));
  process.stdout.write(
    `${JSON.stringify({ backend: nats ? 'nats' : 'files', output: !none, rate, cpuUs: us, profile: prof ? join(dir, name) : null })}\n`,
  );
} finally {
  worker.close();
  sink.kill();
  await runCleanups(cleanups);
  rmSync(root, { recursive: true, force: true });
}
