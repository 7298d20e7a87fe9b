// Keep-alive ingest with one webhook output attached against none (issue 28's target: ≥ 0.9×): the same
// load on two collectors in turn, the output forwarding everything to a loopback sink in another process.
// Run: node --import tsx test/bench/outputs-ingest-ab.ts [seconds] [rounds]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadWorker, standardWorkload } from './load.js';
import { detectPinning, startThreatcol } from './processes.js';

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 2);
const pin = detectPinning();
const root = mkdtempSync(join(tmpdir(), 'threatcol-bench-outab-'));
const sink = fork(new URL('./webhook-sink.mjs', import.meta.url), [], { stdio: 'inherit' });
const port = await new Promise<number>((resolve) => sink.once('message', (m) => resolve(m as number)));
const config = join(root, 'config.json');
writeFileSync(
  config,
  JSON.stringify({
    outputs: { sink: { type: 'webhook', url: `http://127.0.0.1:${port}/sink`, batch: { maxRecords: 1000 } } },
  }),
);
const worker = new LoadWorker(pin);
const rates: Record<'none' | 'output', number[]> = { none: [], output: [] };
try {
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['none', 'output'] as const) {
      const dataDir = join(root, `${kind}-${round}`);
      const server = await startThreatcol(
        kind,
        dataDir,
        pin,
        kind === 'output' ? { args: ['--config', config] } : {},
      );
      try {
        const result = await worker.measure(
          'autocannon',
          server,
          server,
          standardWorkload('firewall', seconds),
        );
        rates[kind].push(result.recordsPerSecond);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  worker.close();
  sink.kill();
  rmSync(root, { recursive: true, force: true });
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  JSON.stringify({
    pinning: pin.reason,
    seconds,
    none: rates.none.map(Math.round),
    output: rates.output.map(Math.round),
    ratio: Number((mean(rates.output) / mean(rates.none)).toFixed(3)),
  }),
);
