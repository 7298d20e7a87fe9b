// What the tools that run some figures alone (outputs.ts, syslog.ts, syslog-ab.ts) set up as `npm run bench`
// does: pinning, the load worker, a timed log, the run lengths (--quick or a full run; --seconds S, --pairs N),
// a temporary root.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue } from './argv.js';
import type { BenchContext } from './figures-load.js';
import { LoadWorker } from './load.js';
import { detectPinning } from './processes.js';

export function standaloneContext(name: string): { ctx: BenchContext; root: string; close(): void } {
  const quick = process.argv.includes('--quick');
  const started = performance.now();
  const log = (message: string) =>
    process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);
  const pin = detectPinning();
  const worker = new LoadWorker(pin);
  const root = mkdtempSync(join(tmpdir(), `threatcol-bench-${name}-`));
  const ctx: BenchContext = {
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
  return {
    ctx,
    root,
    close() {
      worker.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
