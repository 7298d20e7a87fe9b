// Figures 12 and 13 alone (what `npm run bench` runs among the others), for work on the outputs:
//   node --import tsx test/bench/outputs.ts [--quick] [--only 12|13] [--pairs N] [--seconds S] [--base [LABEL=]BIN]
// (after `npm run build`); --base: another checkout's bin/threatcol with the same output in figure 13's pairs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue, baseBuilds } from './argv.js';
import { forwardingRows, outputIngestRows } from './figures-outputs.js';
import { LoadWorker } from './load.js';
import { detectPinning } from './processes.js';
import { type Row, textTable } from './report.js';

const quick = process.argv.includes('--quick');
const started = performance.now();
const log = (message: string) =>
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);
const pin = detectPinning();
const worker = new LoadWorker(pin);
const root = mkdtempSync(join(tmpdir(), 'threatcol-bench-outputs-'));
const ctx = {
  quick,
  pin,
  worker,
  seconds: Number(argValue('--seconds') ?? (quick ? 0.8 : 5)),
  pairs: Number(argValue('--pairs') ?? (quick ? 3 : 5)),
  warmupSeconds: quick ? 0.5 : 2,
  sendAvailable: false,
  log,
  runs: {},
};
const only = argValue('--only');
const rows: Row[] = [];
try {
  log(`outputs figures${quick ? ' --quick' : ''}, ${pin.reason}`);
  if (only !== '13') {
    log('figure 12: forwarding throughput per forwarder CPU second');
    rows.push(...(await forwardingRows(ctx)));
  }
  if (only !== '12') {
    log('figure 13: keep-alive ingest with one output attached against none');
    rows.push(...(await outputIngestRows(ctx, root, baseBuilds())));
  }
} finally {
  worker.close();
  rmSync(root, { recursive: true, force: true });
}
process.stdout.write(`\n${textTable(rows)}\n`);
process.exitCode = rows.some((r) => r.pass === false) ? 1 : 0;
