// Figure 14 alone (what `npm run bench` runs among the others), for work on the syslog input:
//   node --import tsx test/bench/syslog.ts [--quick]     (after `npm run build`)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syslogRows } from './figures-syslog.js';
import { LoadWorker } from './load.js';
import { detectPinning } from './processes.js';
import { textTable } from './report.js';

const quick = process.argv.includes('--quick');
const started = performance.now();
const log = (message: string) =>
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${message}\n`);
const pin = detectPinning();
const worker = new LoadWorker(pin);
const root = mkdtempSync(join(tmpdir(), 'threatcol-bench-syslog-'));
const ctx = {
  quick,
  pin,
  worker,
  seconds: quick ? 0.8 : 5,
  pairs: quick ? 3 : 5,
  warmupSeconds: quick ? 0.5 : 2,
  sendAvailable: false,
  log,
  runs: {},
};
try {
  log(`figure 14: syslog over TLS${quick ? ' --quick' : ''}, ${pin.reason}`);
  const rows = await syslogRows(ctx, root);
  process.stdout.write(`\n${textTable(rows)}\n`);
  process.exitCode = rows.some((r) => r.pass === false) ? 1 : 0;
} finally {
  worker.close();
  rmSync(root, { recursive: true, force: true });
}
