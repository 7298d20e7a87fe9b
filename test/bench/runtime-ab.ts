// `node --import tsx test/bench/runtime-ab.ts [--runtime LABEL=NODE ...] [--rounds N] [--seconds S]
// [--startup-runs N]`: figure 16 alone, for choosing the bundled runtime: threatcol on each given Node binary
// (default: the bundled one, node_modules/.bin/node, and the machine's `node`), rounds rotated in one run; prints
// the table (first runtime against each other) and the runs as JSON. Run it under
// `flock /tmp/threatcol-bench.lock` after `npm run build`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue } from './argv.js';
import { machineRuntime, measureRuntimes, type Runtime, runtimeAt, runtimeRows } from './figures-runtime.js';
import { LoadWorker } from './load.js';
import { detectPinning, ROOT } from './processes.js';
import { textTable } from './report.js';

const given = process.argv.flatMap((a, i) => (a === '--runtime' ? [process.argv[i + 1] as string] : []));
const runtimes: Runtime[] =
  given.length > 0
    ? given.map((g) => runtimeAt(g.slice(0, g.indexOf('=')), g.slice(g.indexOf('=') + 1)))
    : [
        runtimeAt('bundled', join(ROOT, 'node_modules/.bin/node')),
        ...[machineRuntime()].filter((r): r is Runtime => r !== null),
      ];
const pin = detectPinning();
const worker = new LoadWorker(pin);
const root = mkdtempSync(join(tmpdir(), 'threatcol-runtime-ab-'));
const log = (m: string) => process.stdout.write(`${m}\n`);
try {
  log(`${runtimes.map((r) => `${r.label} ${r.version}`).join(', ')}; ${pin.reason}`);
  const runs = await measureRuntimes({
    runtimes,
    root,
    pin,
    worker,
    rounds: Number(argValue('--rounds') ?? 4),
    seconds: Number(argValue('--seconds') ?? 6),
    warmupSeconds: 2,
    startupRuns: Number(argValue('--startup-runs') ?? 21),
    log,
  });
  const [first, ...others] = runs;
  if (first) log(`\n${textTable(runtimeRows(first, others))}\n`);
  log(
    JSON.stringify(
      runs.map((r) => ({
        ...r,
        rounds: r.rounds.map((m) => ({
          rps: m.recordsPerSecond,
          cpuSeconds: m.serverCpuSeconds,
          rss: m.serverRss,
        })),
      })),
    ),
  );
} finally {
  worker.close();
  rmSync(root, { recursive: true, force: true });
}
