// Measures `threatcol threats stats` on a 1 GiB store (prefilled like the benchmark's), through the compiled
// CLI; run under `flock /tmp/threatcol-bench.lock`. Prints one JSON line per run; not part of the test suite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prefillStore } from '../bench/prefill.js';
import { runCli } from '../helpers/cli.js';

const bytes = Number(process.env.STATS_BYTES ?? 1024 ** 3);
const dir = mkdtempSync(join(tmpdir(), 'threatcol-stats-'));
try {
  const filled = prefillStore(dir, bytes);
  console.log(JSON.stringify({ prefilled: filled }));
  for (const args of [
    ['--by', 'threat'],
    ['--by', 'src_ip', '--json'],
    ['--by', 'sensor', '--since', '7d'],
  ]) {
    const started = performance.now();
    const r = await runCli(['threats', 'stats', '--data-dir', dir, ...args], { timeoutMs: 600_000 });
    const seconds = (performance.now() - started) / 1000;
    if (r.code !== 0) throw new Error(r.stderr);
    const mibPerS = filled.bytes / 1024 ** 2 / seconds;
    console.log(
      JSON.stringify({
        args: args.join(' '),
        seconds: +seconds.toFixed(2),
        mibPerS: +mibPerS.toFixed(0),
        first: r.stdout.split('\n')[0],
      }),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
